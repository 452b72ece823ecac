import Courier
@testable import CourierTestServer
import Foundation

/// Multipart framing both ways: arbitrary bytes through the test server's parser (never traps),
/// and forms built from the fuzzer's bytes framed by `MultipartFormData` then parsed back to the
/// same parts.
enum MultipartFuzzing {
    static func run(_ bytes: [UInt8]) {
        var input = FuzzInput(bytes)
        let boundary = "Boundary+" + String(input.byte())
        _ = MultipartParser.parse(bytes, boundary: boundary)
        _ = HeaderParameters.parse(String(decoding: bytes, as: UTF8.self))

        let form = MultipartFormData(boundary: boundary)
        var expected: [(name: String, body: [UInt8])] = []
        while !input.isAtEnd, expected.count < 8 {
            let name = "field\(expected.count)"
            let body = Array(input.string(maxLength: 200).utf8)
            form.appendPart(formData: Data(body), name: name)
            expected.append((name, body))
        }
        // A body holding the delimiter itself can't be framed unambiguously by any multipart
        // writer: that is what a random boundary (`MultipartFormData.makeBoundary()`) is for.
        let delimiter = Array(("\r\n--" + boundary).utf8)
        guard !expected.isEmpty,
            !expected.contains(where: { part in ByteSearch.firstIndex(of: delimiter, in: [13, 10] + part.body + [13, 10], from: 0) != nil })
        else { return }
        let framed = Box()
        let done = DispatchSemaphore(value: 0)
        Task {
            try? await form.writeBody { chunk in framed.append(chunk) }
            done.signal()
        }
        done.wait()
        invariant(Int64(framed.bytes.count) == form.contentLength, "framed \(framed.bytes.count) bytes, declared \(form.contentLength)")
        guard let parts = MultipartParser.parse(framed.bytes, boundary: boundary) else {
            invariant(false, "a framed form does not parse")
            return
        }
        invariant(parts.count == expected.count, "\(parts.count) parts parsed, \(expected.count) framed")
        for (part, sent) in zip(parts, expected) {
            invariant(part.body == sent.body, "part \(sent.name) changed in framing")
        }
    }

    /// Collects the framed body (written from one task, read after it finished).
    final class Box: @unchecked Sendable {
        var bytes: [UInt8] = []
        func append(_ data: Data) { bytes.append(contentsOf: data) }
    }
}
