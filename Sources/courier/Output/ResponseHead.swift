import Courier
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A response head as the server sent it, for printing: the HTTP version, the status code and
/// reason phrase, and every field in arrival order (repeated names repeated).
struct ResponseHead: Equatable {
    var version: String
    var statusCode: Int
    var reasonPhrase: String
    var fields: [(name: String, value: String)]

    static func == (lhs: ResponseHead, rhs: ResponseHead) -> Bool {
        lhs.version == rhs.version && lhs.statusCode == rhs.statusCode && lhs.reasonPhrase == rhs.reasonPhrase
            && lhs.fields.map(\.name) == rhs.fields.map(\.name) && lhs.fields.map(\.value) == rhs.fields.map(\.value)
    }

    /// The head a task received (wire order, repeats), else one made from `response` (whose
    /// fields Foundation has merged: sorted by name then).
    init(task: SessionTask?, response: HTTPURLResponse) {
        if let task, let received = task.receivedResponse {
            let phrase = received.status.reasonPhrase
            self.init(
                // HTTP/2 has no minor version on the wire: `HTTP/2 200`, as curl and HTTPie print it.
                version: task.receivedHTTPVersion.map { $0 == "HTTP/2.0" ? "HTTP/2" : $0 } ?? "HTTP/1.1",
                statusCode: received.status.code,
                reasonPhrase: phrase.isEmpty ? ExchangePrinter.reasonPhrase(received.status.code) : phrase,
                fields: received.headerFields.map { ($0.name.rawName, $0.value) })
            return
        }
        var fields: [(name: String, value: String)] = []
        for (key, value) in response.allHeaderFields {
            fields.append((String(describing: key), String(describing: value)))
        }
        fields.sort { $0.name.lowercased() < $1.name.lowercased() }
        self.init(
            version: "HTTP/1.1", statusCode: response.statusCode,
            reasonPhrase: ExchangePrinter.reasonPhrase(response.statusCode), fields: fields)
    }

    init(version: String, statusCode: Int, reasonPhrase: String, fields: [(name: String, value: String)]) {
        self.version = version
        self.statusCode = statusCode
        self.reasonPhrase = reasonPhrase
        self.fields = fields
    }

    /// The first value of `name` (case-insensitive).
    func value(of name: String) -> String? {
        fields.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
    }
}
