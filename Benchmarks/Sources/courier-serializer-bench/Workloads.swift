import Courier
import Foundation

/// The inputs every variant works on, built deterministically (the same bytes in every child).
enum Workloads {
    // MARK: - Query string

    /// A 1,000-key dictionary with a realistic mix: strings that need escaping (spaces, `&`,
    /// `=`, `%`, accents, CJK, emoji), integers, doubles, Booleans, nulls, nested dictionaries
    /// two levels deep, arrays (with a dictionary inside) and sets.
    static func queryParameters(keys: Int = 1_000) -> Parameters {
        var parameters: Parameters = [:]
        for index in 0..<keys {
            let key = index % 50 == 0 ? "key \(index)&x" : "key\(index)"
            let value: ParameterValue
            switch index % 10 {
            case 0: value = .string("Grüße & Küsse = 100% / \(index)?")
            case 1: value = .int(index * 37)
            case 2: value = .double(Double(index) + 0.25)
            case 3: value = .bool(index % 20 == 3)
            case 4: value = .null
            case 5:
                value = [
                    "id": .int(index), "name": .string("user \(index)"), "tags": ["a b", "c&d", "é"],
                    "geo": ["lat": 48.8566, "lng": 2.3522], "note": .null,
                ]
            case 6: value = [1, "two", 3.5, ["k": "v w"]]
            case 7: value = .set(["x", "y z", "🙂", .int(index)])
            case 8: value = .string("東京 🚀 café n°\(index)")
            default: value = .string("value\(index)")
            }
            parameters[key] = value
        }
        return parameters
    }

    /// The number of `field=value` pairs `queryString(from:)` must write (leaves; empty
    /// containers write none), counted independently of Courier.
    static func leafCount(_ value: ParameterValue) -> Int {
        switch value {
        case .dictionary(let dictionary): return dictionary.values.reduce(0) { $0 + leafCount($1) }
        case .array(let values): return values.reduce(0) { $0 + leafCount($1) }
        case .set(let values): return values.reduce(0) { $0 + leafCount($1) }
        default: return 1
        }
    }

    // MARK: - JSON

    /// A JSON document of at least `bytes` bytes: `{"count": n, "records": [...]}`, records
    /// with strings that need unescaping (quotes, backslashes, `\n`, `\u00e9`), raw UTF-8
    /// (accents, CJK, emoji), integers, doubles, Booleans, nulls, a nested object and arrays.
    static func jsonDocument(bytes: Int) -> (data: Data, records: Int) {
        var body = [UInt8]()
        body.reserveCapacity(bytes + 4096)
        var count = 0
        while body.count < bytes {
            if count > 0 { body.append(UInt8(ascii: ",")) }
            body.append(contentsOf: record(count).utf8)
            count += 1
        }
        var document = Data("{\"count\":\(count),\"records\":[".utf8)
        document.append(contentsOf: body)
        document.append(contentsOf: "]}".utf8)
        return (document, count)
    }

    static func record(_ index: Int) -> String {
        let email = index % 3 == 0 ? "null" : "\"user\(index)@example.com\""
        let zip = index % 2 == 0 ? "null" : "\"75\(index % 1000)\""
        return """
            {"id":\(index),"guid":"\(String(index &* 2_654_435_761, radix: 16))-\(index)","active":\(index % 2 == 0),\
            "balance":\(Double(index % 100_000) / 100 + 0.01),"name":"Ana \\"Nana\\" Müller \(index)","email":\(email),\
            "tags":["alpha","beta\\/gamma","δέλτα"],"address":{"street":"12 Rue de l'Église","city":"東京","zip":\(zip)},\
            "scores":[1.5,\(index % 7),3.25e2,-0.001],"note":"line1\\nline2\\t\\\\ 🙂 \\u00e9\\u4e2d","parent":null}
            """
    }

    /// The typed mirror of ``record(_:)`` for `JSONDecoder`.
    struct Document: Decodable {
        var count: Int
        var records: [Record]
    }

    struct Record: Decodable {
        var id: Int
        var guid: String
        var active: Bool
        var balance: Double
        var name: String
        var email: String?
        var tags: [String]
        var address: Address
        var scores: [Double]
        var note: String
        var parent: Int?
    }

    struct Address: Decodable {
        var street: String
        var city: String
        var zip: String?
    }

    // MARK: - Multipart

    /// The shape of the multipart body for `mebibytes` MiB: one file part of most of it, and
    /// `dataParts` in-memory parts of 1 MiB (all the same buffer, so they cost 1 MiB of RSS).
    struct MultipartShape {
        var fileBytes: Int64
        var dataParts: Int

        init(mebibytes: Int) {
            dataParts = max(1, mebibytes / 8)
            fileBytes = Int64(max(1, mebibytes - dataParts)) << 20
        }
    }

    /// The bytes of the file part: a 64 KiB pattern that is not a run of one byte.
    static func filePattern() -> Data {
        var pattern = Data(count: 64 << 10)
        for index in pattern.indices { pattern[index] = UInt8(truncatingIfNeeded: index &* 31 &+ index >> 8) }
        return pattern
    }

    /// Makes (once) the file the multipart file part is read from, and returns its path.
    static func multipartFile(directory: String, bytes: Int64) throws -> String {
        let path = "\(directory)/multipart-file-\(bytes).bin"
        if let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.int64Value, size == bytes {
            return path
        }
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let temporary = path + ".\(getpid()).tmp"
        guard FileManager.default.createFile(atPath: temporary, contents: nil),
            let handle = FileHandle(forWritingAtPath: temporary)
        else { throw BenchError("cannot create \(temporary)") }
        let pattern = filePattern()
        var remaining = bytes
        while remaining > 0 {
            let count = Int(min(Int64(pattern.count), remaining))
            try handle.write(contentsOf: pattern.prefix(count))
            remaining -= Int64(count)
        }
        try handle.close()
        try? FileManager.default.removeItem(atPath: path)
        try FileManager.default.moveItem(atPath: temporary, toPath: path)
        return path
    }

    /// The multipart request the session layer would send: a few form fields from parameters,
    /// the file part, then the data parts.
    static func multipartForm(filePath: String, shape: MultipartShape) throws -> MultipartFormData {
        let chunk = Data(repeating: UInt8(ascii: "d"), count: 1 << 20)
        let request = try HTTPRequestSerializer().multipartFormRequest(
            method: "POST", urlString: "http://127.0.0.1/upload",
            parameters: ["title": "benchmark", "meta": ["size": .int(Int(shape.fileBytes)), "tags": ["a", "b"]]]
        ) { form in
            try form.appendPart(fileURL: URL(fileURLWithPath: filePath), name: "file", fileName: "big.bin", mimeType: "application/octet-stream")
            for index in 0..<shape.dataParts {
                form.appendPart(fileData: chunk, name: "chunk\(index)", fileName: "chunk\(index).bin", mimeType: "application/octet-stream")
            }
        }
        guard let form = request.formData else { throw BenchError("the multipart request has no body") }
        return form
    }

    // MARK: - Percent-escaping

    /// A string of at least `bytes` UTF-8 bytes mixing ASCII words, reserved characters,
    /// accents, CJK, emoji (with ZWJ sequences) and combining marks.
    static func mixedUnicodeString(bytes: Int) -> String {
        let fragments = [
            "hello world ", "a&b=c;d+e ", "100% /path?x#y ", "Grüße aus Köln ", "東京タワー ", "🙂🚀👩‍👩‍👧 ",
            "e\u{301}te\u{301} ", "[x]@y!$'()*, ", "~-._ ", "Ωμέγα ", "ق ", "\u{1F1EB}\u{1F1F7} ",
        ]
        var text = ""
        text.reserveCapacity(bytes + 64)
        var index = 0
        while text.utf8.count < bytes {
            text += fragments[index % fragments.count]
            index += 1
        }
        return text
    }

    /// The characters ``percentEscaped(_:)`` leaves alone, for Foundation's escaping.
    static let foundationAllowed = CharacterSet(
        charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~/?")
}

/// A failure of the benchmark itself (not of the code measured).
struct BenchError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
