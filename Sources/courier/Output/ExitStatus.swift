import Courier
import Foundation

/// `courier`'s exit statuses: HTTPie's (0–6) plus one per kind of network failure.
enum ExitStatus: Int32, CaseIterable {
    /// The exchange happened (any status without `--check-status`; 1xx/2xx with it).
    case success = 0
    /// Any other error (a download that could not be saved, say).
    case error = 1
    /// The request timed out; also bad request items or options (HTTPie's usage status).
    case timeoutOrUsage = 2
    /// `--check-status` and a 3xx response (not followed).
    case redirection = 3
    /// `--check-status` and a 4xx response.
    case clientError = 4
    /// `--check-status` and a 5xx response.
    case serverError = 5
    /// More redirects than `--max-redirects`.
    case tooManyRedirects = 6
    /// No connection: refused, unreachable, DNS failure.
    case cannotConnect = 7
    /// The TLS handshake failed or the server's certificate was rejected.
    case tlsFailure = 8
    /// The connection broke before the response was complete.
    case connectionLost = 9

    /// The text of `courier --help` and the README.
    static let documentation = """
        Exit status: 0 success; 1 other error; 2 timed out (--timeout, --max-time), or invalid items/options; \
        with --check-status 3 (3xx), 4 (4xx), 5 (5xx); 6 too many redirects; \
        7 could not connect (refused, unreachable, DNS); 8 TLS handshake or certificate rejected; \
        9 connection lost mid-exchange.
        """

    /// The status `--check-status` gives a response code, nil for 1xx and 2xx.
    static func checking(statusCode: Int) -> ExitStatus? {
        switch statusCode {
        case 300..<400: return .redirection
        case 400..<500: return .clientError
        case 500..<600: return .serverError
        default: return nil
        }
    }
}

/// A failure as the user reads it: one line saying what happened, one saying what to try.
struct FailureReport: Error {
    var status: ExitStatus
    var message: String
    var hint: String?

    /// The report for an error from building or running a request; `timeout` and `maxTime`
    /// are the `--timeout` and `--max-time` given, named when their limit was hit.
    init(_ error: any Error, url: URL?, timeout: Double?, maxTime: Double? = nil, maximumRedirects: Int) {
        let host = url?.host ?? "the server"
        switch error {
        case let report as FailureReport:
            self = report
        case let error as RequestBuildError:
            self.init(status: .timeoutOrUsage, message: error.description)
        case let error as RequestItem.ParseError:
            self.init(status: .timeoutOrUsage, message: error.description)
        case let error as RequestArguments.UsageError:
            self.init(status: .timeoutOrUsage, message: error.description)
        case let error as SecondsOption.InvalidValue:
            self.init(status: .timeoutOrUsage, message: error.description)
        case let error as CourierError:
            self.init(error, host: host, timeout: timeout, maxTime: maxTime, maximumRedirects: maximumRedirects)
        case let error as EngineError:
            self.init(
                CourierError(error, url: url), host: host, timeout: timeout, maxTime: maxTime,
                maximumRedirects: maximumRedirects)
        default:
            self.init(status: .error, message: String(describing: error))
        }
    }

    init(status: ExitStatus, message: String, hint: String? = nil) {
        self.status = status
        self.message = message
        self.hint = hint
    }

    private init(_ error: CourierError, host: String, timeout: Double?, maxTime: Double?, maximumRedirects: Int) {
        switch error {
        case .timedOut(let url, let reason) where reason.contains(EngineError.TimeoutKind.deadline.rawValue):
            let limit = maxTime.map { " (--max-time \(Self.seconds($0)))" } ?? ""
            // Where the time ran out ("during the TLS handshake (on redirect 2)"), when known.
            let prefix = EngineError.TimeoutKind.deadline.rawValue + " timeout "
            let step = reason.hasPrefix(prefix) ? " " + reason.dropFirst(prefix.count) : ""
            self.init(
                status: .timeoutOrUsage,
                message: "request timed out\(limit)\(step): the whole exchange took too long for \(url?.absoluteString ?? host)",
                hint: "The transfer did not finish in time; try a larger --max-time.")
        case .timedOut(let url, let reason):
            let limit = timeout.map { " (--timeout \(Self.seconds($0)))" } ?? ""
            self.init(
                status: .timeoutOrUsage,
                message: "request timed out\(limit): \(Self.lowercasedFirst(reason)) for \(url?.absoluteString ?? host)",
                hint: "The server did not answer in time; try a larger --timeout.")
        case .tooManyRedirects(let url, _):
            self.init(
                status: .tooManyRedirects,
                message: "too many redirects (more than \(maximumRedirects)); the last one pointed to "
                    + (url?.absoluteString ?? "?"),
                hint: "Raise --max-redirects, or drop --follow to see the redirect response.")
        case .unfollowableRedirect(let url, let location):
            self.init(
                status: .error,
                message: "will not follow the redirect from \(url?.absoluteString ?? host) to \(location): "
                    + "only http and https redirects are followed",
                hint: "Drop --follow to see the redirect response.")
        case .serverTrustRejected(let trustHost, let reason, _, _) where reason.contains("pinned"):
            self.init(
                status: .tlsFailure,
                message: "TLS certificate rejected for \(trustHost): \(reason)",
                hint: "The server does not present what --pin-cert pins; check the file and --pin-mode.")
        case .serverTrustRejected(let trustHost, let reason, _, _):
            self.init(
                status: .tlsFailure,
                message: "TLS certificate rejected for \(trustHost): \(reason)",
                hint: "Use --verify PATH to trust a CA, or --verify no to skip checks.")
        case .cannotConnect(_, let reason) where reason.contains("TLS"):
            self.init(
                status: .tlsFailure, message: "TLS connection to \(host) failed: \(MessageSanitizer.tlsReason(reason))",
                hint: "Check that the server speaks TLS here, or use --verify PATH / --verify no.")
        case .cannotConnect(let url, let reason):
            self.init(
                status: .cannotConnect,
                message: "could not connect to \(Self.authority(url) ?? host): \(reason)",
                hint: "Is the server running, and are the host name and port right?")
        case .engine(.tlsHandshakeFailed(let reason)):
            self.init(
                status: .tlsFailure, message: "TLS handshake with \(host) failed: \(MessageSanitizer.tlsReason(reason))",
                hint: "Check that the server speaks TLS here, or use --verify PATH / --verify no.")
        case .engine(.dnsFailure(let dnsHost, let reason)), .engine(.cannotConnect(let dnsHost, _, let reason)):
            self.init(
                status: .cannotConnect, message: "could not connect to \(dnsHost): \(reason)",
                hint: "Is the server running, and are the host name and port right?")
        case .engine(.proxyFailed(let proxy, let target, let refusal)):
            self.init(
                status: .cannotConnect, message: "the proxy \(proxy) did not connect to \(target): \(refusal)",
                hint: "Check the proxy URL (--proxy, or http_proxy/https_proxy/all_proxy), its user name and password.")
        case .connectionLost(_, let reason):
            self.init(
                status: .connectionLost,
                message: "the connection to \(host) was lost before the response was complete: \(reason)")
        case .requestSerializationFailed(let reason):
            self.init(status: .timeoutOrUsage, message: "cannot build the request: \(reason)")
        case .engine(.invalidURL(let text)):
            self.init(status: .timeoutOrUsage, message: "invalid URL: \(text)")
        default:
            self.init(status: .error, message: error.description)
        }
    }

    /// The lines for stderr: URL passwords dropped, library source locations removed, and
    /// control characters escaped so the message stays on its line.
    var text: String {
        let clean = { MessageSanitizer.escapingControlCharacters(MessageSanitizer.clean($0)) }
        return "courier: error: \(clean(message))\n" + (hint.map { "\(clean($0))\n" } ?? "")
    }

    /// The engine's trust messages end with `Reason: <why>`; the why is what the user needs.
    private static func authority(_ url: URL?) -> String? {
        guard let url, let host = url.host else { return nil }
        return url.port.map { "\(host):\($0)" } ?? host
    }

    private static func seconds(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(value)
    }

    private static func lowercasedFirst(_ text: String) -> String {
        text.prefix(1).lowercased() + text.dropFirst()
    }
}
