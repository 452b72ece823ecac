import Courier
import CourierEngine
import CourierTestServer
import Foundation
import Testing

/// The session task kinds every hostile case runs against.
enum HostileTaskKind: String, Sendable, CaseIterable {
    case data
    case uploadData = "upload-data"
    case uploadFile = "upload-file"
    case download
    case resumedDownload = "resumed-download"

    var isDownload: Bool { self == .download || self == .resumedDownload }
}

/// The typed failure a hostile case must end in.
enum HostileExpectation: Sendable, CustomStringConvertible {
    case connectionLost
    case timedOut
    case protocolViolation
    case decompressionLimit
    case responseBodyTooLarge
    case invalidResumeResponse
    case cannotConnect
    case tlsHandshakeFailed
    case unacceptableStatusCode(Int)
    /// Either outcome: a race the client can't control (whether a reset or the answer comes first).
    indirect case either(HostileExpectation, HostileExpectation)
    /// Any typed `CourierError` but a cancellation: for defects being fixed whose error case
    /// does not exist yet (the note says which fix, and what the case should become).
    case anyTypedFailure(note: String)

    func matches(_ error: (any Error)?) -> Bool {
        guard let error = error as? CourierError else { return false }
        switch (self, error) {
        case (.connectionLost, .connectionLost), (.timedOut, .timedOut): return true
        case (.protocolViolation, .engine(.protocolViolation)): return true
        case (.decompressionLimit, .engine(.decompressionLimitExceeded)): return true
        case (.responseBodyTooLarge, .responseBodyTooLarge), (.invalidResumeResponse, .invalidResumeResponse): return true
        case (.cannotConnect, .cannotConnect), (.tlsHandshakeFailed, .engine(.tlsHandshakeFailed)): return true
        case (.unacceptableStatusCode(let status), .unacceptableStatusCode(let response, _, _)): return response.statusCode == status
        case (.either(let first, let second), _): return first.matches(error) || second.matches(error)
        case (.anyTypedFailure, .cancelled): return false
        case (.anyTypedFailure, _): return true
        default: return false
        }
    }

    var description: String {
        switch self {
        case .connectionLost: return "CourierError.connectionLost"
        case .timedOut: return "CourierError.timedOut"
        case .protocolViolation: return "CourierError.engine(.protocolViolation)"
        case .decompressionLimit: return "CourierError.engine(.decompressionLimitExceeded)"
        case .responseBodyTooLarge: return "CourierError.responseBodyTooLarge"
        case .invalidResumeResponse: return "CourierError.invalidResumeResponse"
        case .cannotConnect: return "CourierError.cannotConnect"
        case .tlsHandshakeFailed: return "CourierError.engine(.tlsHandshakeFailed)"
        case .unacceptableStatusCode(let status): return "CourierError.unacceptableStatusCode(\(status))"
        case .either(let first, let second): return "\(first) or \(second)"
        case .anyTypedFailure(let note): return "a typed CourierError (\(note))"
        }
    }
}

/// One misbehaving server and what a client must make of it.
struct HostileCase: Sendable, CustomStringConvertible {
    var name: String
    var script: HostileScript
    var expected: HostileExpectation
    var tls: ServerChainKind? = nil
    /// The manager's idle timeout (`timeoutIntervalForRequest`): short where the case stalls.
    var requestTimeout: TimeInterval = 15
    /// The manager's `maximumResponseBodySize`, when the case needs a smaller one than the default.
    var maximumResponseBodySize: Int64? = nil
    /// The client speaks TLS to a server that doesn't.
    var httpsToPlainServer = false
    /// The task kinds the case applies to.
    var kinds: [HostileTaskKind] = HostileTaskKind.allCases
    /// Where a task kind must end otherwise than ``expected``.
    var byKind: [HostileTaskKind: HostileExpectation] = [:]

    func expectation(for kind: HostileTaskKind) -> HostileExpectation { byKind[kind] ?? expected }

    var description: String { name + (tls == nil ? "" : " (TLS)") }

    /// A head, then `body`, after reading the request.
    static func answer(_ headers: [String], _ body: String, status: String = "200 OK") -> HostileScript {
        .answer(status: status, headers: headers, body: body)
    }

    static let all: [HostileCase] = {
        var cases: [HostileCase] = [
            HostileCase(name: "lying Content-Length, then close", script: .lyingContentLength(claimed: "100", sent: 10), expected: .connectionLost),
            HostileCase(
                name: "lying Content-Length, then stall", script: .lyingContentLength(claimed: "100", sent: 10, afterwards: .stall),
                expected: .timedOut, requestTimeout: 1),
            HostileCase(name: "stall before the head", script: HostileScript([.readHead, .stall]), expected: .timedOut, requestTimeout: 1),
            HostileCase(name: "close without an answer", script: HostileScript([.readHead, .readBody, .close]), expected: .connectionLost),
            HostileCase(name: "reset after the head", script: HostileScript([.readHead, .reset]), expected: .connectionLost),
            HostileCase(
                name: "reset mid-body",
                script: HostileScript([.readHead, .readBody, .head("200 OK", ["Content-Length: 100000"]), .write(String(repeating: "x", count: 1000)), .sleep(milliseconds: 50), .reset]),
                expected: .connectionLost),
            HostileCase(name: "half-close without an answer", script: HostileScript([.readHead, .readBody, .halfClose], afterwards: .stall), expected: .connectionLost),
            HostileCase(
                name: "storm of 100 Continue",
                script: HostileScript([.readHead, .readBody, .informationalStorm(count: 20_000), .head("200 OK", ["Content-Length: 2"]), .write("ok")]),
                expected: .protocolViolation),
            HostileCase(
                name: "storm of 103 Early Hints",
                script: HostileScript([.readHead, .readBody, .informationalStorm(count: 20_000, status: 103), .head("200 OK", ["Content-Length: 2"]), .write("ok")]),
                expected: .protocolViolation),
            HostileCase(name: "gzip bomb", script: .gzipBomb(), expected: .decompressionLimit),
            HostileCase(
                name: "Content-Length and chunked", script: answer(["Content-Length: 5", "Transfer-Encoding: chunked"], "5\r\nhello\r\n0\r\n\r\n"),
                expected: .protocolViolation),
            HostileCase(
                name: "duplicate differing Content-Lengths", script: answer(["Content-Length: 5", "Content-Length: 6"], "hello!"),
                expected: .protocolViolation),
            HostileCase(name: "obs-fold in Content-Length", script: answer(["Content-Length: 2", " 0"], String(repeating: "x", count: 20)), expected: .protocolViolation),
            HostileCase(
                name: "chunk size ffffffffffffffffff", script: answer(["Transfer-Encoding: chunked"], "ffffffffffffffffff\r\nxx\r\n0\r\n\r\n"),
                expected: .protocolViolation),
            HostileCase(name: "Content-Length -1", script: .lyingContentLength(claimed: "-1", sent: 10), expected: .protocolViolation),
            HostileCase(name: "Content-Length 99999999999999999999", script: .lyingContentLength(claimed: "99999999999999999999", sent: 10), expected: .protocolViolation),
            // The answer comes before the upload's body was read, and the connection closes.
            HostileCase(
                name: "413 before the body, then close",
                script: HostileScript([.readHead, .head("413 Payload Too Large", ["Content-Length: 0", "Connection: close"]), .close]),
                expected: .unacceptableStatusCode(413),
                byKind: [
                    .uploadData: .either(.unacceptableStatusCode(413), .connectionLost),
                    .uploadFile: .either(.unacceptableStatusCode(413), .connectionLost),
                ]),
            HostileCase(
                name: "plain HTTP answering a TLS client hello",
                script: HostileScript([.write("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n"), .close]),
                expected: .tlsHandshakeFailed, httpsToPlainServer: true),
            // A data or upload task refuses a body larger than its limit from the head; a
            // download takes what comes, and the early close is a lost connection.
            HostileCase(
                name: "Content-Length 2^63-1, then close", script: .lyingContentLength(claimed: "9223372036854775807", sent: 10),
                expected: .responseBodyTooLarge, byKind: [.download: .connectionLost, .resumedDownload: .connectionLost]),
            // Without a length to refuse up front, the limit stops the body as it grows.
            HostileCase(
                name: "chunked body past the body-size limit",
                script: answer(["Transfer-Encoding: chunked"], String(repeating: "10000\r\n" + String(repeating: "y", count: 0x10000) + "\r\n", count: 16) + "0\r\n\r\n"),
                expected: .responseBodyTooLarge, maximumResponseBodySize: 256 << 10, kinds: [.data, .uploadData, .uploadFile]),
            HostileCase(
                name: "close-delimited body past the body-size limit",
                script: answer(["Connection: close"], String(repeating: "z", count: 1 << 20)),
                expected: .responseBodyTooLarge, maximumResponseBodySize: 256 << 10, kinds: [.data, .uploadData, .uploadFile]),
            HostileCase(
                name: "206 whose Content-Range starts elsewhere",
                script: answer(["Content-Range: bytes 0-9/10", "Content-Length: 10", "ETag: \"v1\""], "0123456789", status: "206 Partial Content"),
                expected: .invalidResumeResponse, kinds: [.resumedDownload]),
            // The trap: offset + Content-Length overflowed.
            HostileCase(
                name: "206 with Content-Range bytes 5-*/* and Content-Length 2^63-1",
                script: answer(["Content-Range: bytes 5-*/*", "Content-Length: 9223372036854775807", "ETag: \"v1\""], "0123456789", status: "206 Partial Content"),
                expected: .invalidResumeResponse, kinds: [.resumedDownload]),
            HostileCase(
                name: "206 with Content-Range bytes 5-9223372036854775807/* and a short body",
                script: answer(["Content-Range: bytes 5-9223372036854775807/*", "Content-Length: 10", "ETag: \"v1\""], "0123456789", status: "206 Partial Content"),
                expected: .invalidResumeResponse, kinds: [.resumedDownload]),
        ]
        // Over TLS, the shapes where TLS changes how the end looks.
        for index in [0, 2, 4, 9] {
            var tlsCase = cases[index]
            tlsCase.tls = .valid
            cases.append(tlsCase)
        }
        return cases
    }()
}

/// One hostile case against one task kind: a test argument.
struct HostileRun: Sendable, CustomTestStringConvertible {
    var hostileCase: HostileCase
    var kind: HostileTaskKind

    var testDescription: String { "\(hostileCase) × \(kind.rawValue)" }

    static func matrix(_ cases: [HostileCase]) -> [HostileRun] {
        cases.flatMap { hostileCase in hostileCase.kinds.map { HostileRun(hostileCase: hostileCase, kind: $0) } }
    }
}
