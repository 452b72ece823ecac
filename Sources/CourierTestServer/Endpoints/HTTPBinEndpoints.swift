import Foundation
import NIOHTTP1

/// httpbin's request-inspection and echo endpoints, and the request dictionary that most
/// other endpoints build their JSON from (httpbin's `get_dict`).
enum HTTPBinEndpoints {
    /// The keys of httpbin's request dictionary.
    enum Field: String {
        case url, args, form, data, origin, headers, files, json, method
    }

    /// Fields of `/get`, `/cache`, `/stream/{n}` and friends.
    static let getFields: [Field] = [.url, .args, .headers, .origin]
    /// Fields of `/post`, `/put`, `/patch` and `/delete`.
    static let bodyFields: [Field] = [.url, .args, .form, .data, .origin, .headers, .files, .json]
    /// Fields of `/anything`.
    static let anythingFields: [Field] = bodyFields + [.method]

    /// httpbin's `get_dict(...)`: the request described by `fields`.
    static func dictionary(_ request: ServerRequest, _ fields: [Field]) -> [String: JSONNode] {
        var result: [String: JSONNode] = [:]
        let body = fields.contains(where: { [.form, .data, .files, .json].contains($0) }) ? RequestBody(request) : nil
        for field in fields {
            switch field {
            case .url: result["url"] = .string(request.url)
            case .args: result["args"] = JSONNode.grouped(request.query)
            case .headers: result["headers"] = request.headersJSON
            case .origin: result["origin"] = .string(request.clientAddress)
            case .method: result["method"] = .string(request.method.rawValue)
            case .form: result["form"] = body?.form ?? [:]
            case .files: result["files"] = body?.files ?? [:]
            case .data: result["data"] = .string(body?.data ?? "")
            case .json: result["json"] = body?.json ?? .null
            }
        }
        return result
    }

    /// `/get`, `/post`, `/put`, `/patch`, `/delete`: the request, when the method matches.
    static func methodEcho(_ request: ServerRequest, expected: HTTPMethod) -> ServerReply {
        let allowed: [HTTPMethod] = expected == .GET ? [.GET, .HEAD, .OPTIONS] : [expected, .OPTIONS]
        guard allowed.contains(request.method) else { return .methodNotAllowed(allowed: allowed) }
        return .json(.object(dictionary(request, expected == .GET ? getFields : bodyFields)))
    }

    /// `/anything` and `/anything/*`: the request with its method, for any method.
    static func anything(_ request: ServerRequest) -> ServerReply {
        .json(.object(dictionary(request, anythingFields)))
    }

    /// `/headers`.
    static func headers(_ request: ServerRequest) -> ServerReply {
        .json(["headers": request.headersJSON])
    }

    /// `/ip`.
    static func ip(_ request: ServerRequest) -> ServerReply {
        .json(["origin": .string(request.clientAddress)])
    }

    /// `/user-agent`.
    static func userAgent(_ request: ServerRequest) -> ServerReply {
        .json(["user-agent": request.headers.first(name: "user-agent").map(JSONNode.string) ?? .null])
    }

    /// `/uuid`: a fresh version 4 UUID.
    static func uuid(_ request: ServerRequest) -> ServerReply {
        .json(["uuid": .string(UUID().uuidString.lowercased())])
    }

    /// httpbin's `json_safe`: text when the bytes are UTF-8, else a base64 data URL.
    static func jsonSafe(_ bytes: [UInt8], contentType: String = "application/octet-stream") -> String {
        if let text = String(validating: bytes, as: UTF8.self) {
            return text
        }
        return "data:\(contentType);base64,\(Data(bytes).base64EncodedString())"
    }
}

/// A request body interpreted the way httpbin (Werkzeug) does: form fields and files for
/// `application/x-www-form-urlencoded` and `multipart/form-data`, otherwise raw `data` and,
/// if it parses, `json`.
struct RequestBody {
    var form: JSONNode = [:]
    var files: JSONNode = [:]
    var data = ""
    var json: JSONNode = .null

    init(_ request: ServerRequest) {
        let bytes = request.bodyBytes
        switch request.mediaType {
        case "application/x-www-form-urlencoded":
            self.form = JSONNode.grouped(PercentDecoding.formPairs(String(decoding: bytes, as: UTF8.self)))
        case "multipart/form-data":
            guard let contentType = request.headers.first(name: "content-type"),
                let boundary = MultipartParser.boundary(fromContentType: contentType),
                let parts = MultipartParser.parse(bytes, boundary: boundary)
            else { return }
            var fields: [(name: String, value: String)] = []
            var files: [(name: String, value: String)] = []
            for part in parts {
                guard let name = part.name else { continue }
                if part.filename != nil {
                    let value = HTTPBinEndpoints.jsonSafe(part.body, contentType: part.contentType ?? "application/octet-stream")
                    files.append((name, value))
                } else {
                    fields.append((name, String(decoding: part.body, as: UTF8.self)))
                }
            }
            self.form = JSONNode.grouped(fields)
            self.files = JSONNode.grouped(files)
        default:
            self.data = HTTPBinEndpoints.jsonSafe(bytes)
            self.json = JSONNode.parse(bytes) ?? .null
        }
    }
}
