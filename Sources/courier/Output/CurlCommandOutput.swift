import Courier
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `courier --curl`: the curl command that sends the request courier would send
/// (``Foundation/URLRequest/cURLDescription``), printed instead of sending. A body streamed
/// from a file becomes `--data-binary @file`; a multipart form is written out in full (it
/// is built from the command line, so it fits in memory); a piped stdin streamed with
/// `--chunked` becomes `--data-binary @-` (pipe the same input to curl).
enum CurlCommandOutput {
    /// The command line for `prepared`.
    /// - Throws: a multipart part that can't be read.
    static func command(for prepared: PreparedRequest) async throws -> String {
        var request = prepared.urlRequest
        if let form = prepared.multipart?.formData {
            var body = Data()
            try await form.writeBody { body.append($0) }
            request = prepared.multipart?.urlRequest ?? request
            request.httpBody = body
            return request.cURLDescription
        }
        if let file = prepared.bodyFile {
            request.httpBody = nil
            return request.cURLDescription + " --data-binary @" + quote(file.url.path)
        }
        if prepared.streamsStandardInput {
            request.httpBody = nil
            return request.cURLDescription + " --data-binary @-"
        }
        return request.cURLDescription
    }

    /// `text` single-quoted for a POSIX shell.
    static func quote(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}
