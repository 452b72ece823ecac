import ArgumentParser
import Foundation

/// The four workloads.
enum BenchCase: String, CaseIterable, Codable, Sendable, ExpressibleByArgument {
    /// 5,000 sequential GETs of a ~300-byte JSON.
    case sequentialSmall = "sequential-small"
    /// 20,000 GETs of the same JSON with 64 in flight.
    case concurrentSmall = "concurrent-small"
    /// A 256 MiB response streamed to a file.
    case download256m = "download-256m"
    /// A 256 MiB request body generated chunk by chunk and streamed to the server.
    case upload256m = "upload-256m"

    /// Whether the case is measured in requests per second (else in MB/s).
    var isRequestRate: Bool {
        switch self {
        case .sequentialSmall, .concurrentSmall: return true
        case .download256m, .upload256m: return false
        }
    }

    var unit: String { isRequestRate ? "req/s" : "MB/s" }

    /// Requests in one run, before `--requests` scales it.
    var defaultRequests: Int {
        switch self {
        case .sequentialSmall: return 5_000
        case .concurrentSmall: return 20_000
        case .download256m, .upload256m: return 1
        }
    }
}

/// The clients compared.
enum ClientKind: String, CaseIterable, Codable, Sendable, ExpressibleByArgument {
    case courierEngine = "courier-engine"
    /// Courier's session layer (URLSessionManager) on the same engine.
    case courierSession = "courier-session"
    /// The session layer's swift-http-types shape (`URLSessionManager.data(for: HTTPRequest)`):
    /// the same tasks, no `HTTPURLResponse` made. Small GETs only (its transfers are the
    /// session's).
    case courierSessionHTTPTypes = "courier-session-http-types"
    /// The session layer's typed async shape (`URLSessionManager.response(for:serializer:)`
    /// with `HTTPResponseSerializer`): the same validation as `courier-session`, the result as
    /// swift-http-types values, no `HTTPURLResponse` made for a valid response. Small GETs only.
    case courierSessionTyped = "courier-session-typed"
    /// `courier-session` with an event monitor attached that does nothing and takes no task
    /// events (``SessionEventMonitor/receivesTaskEvents`` false): the cost of having a monitor.
    case courierSessionMonitor = "courier-session-monitor"
    /// `courier-session` with a no-op monitor that takes every task event and exchange: against
    /// `courier-session-monitor`, what the events themselves cost.
    case courierSessionEvents = "courier-session-events"
    case asyncHTTPClient = "async-http-client"
    case urlSession = "urlsession"
    /// Reference: curl's CLI (one process per run; sequential-small from a `-K` file of N URLs
    /// on one kept-alive connection, and the two transfers).
    case curl
    /// Reference: wrk (`-t1 -c1` for sequential-small, `-t1 -c<concurrency>` for
    /// concurrent-small, for `--wrk-duration` seconds).
    case wrk

    /// An external tool that shows the ceiling of this machine and server, not a Swift client.
    var isReference: Bool { self == .curl || self == .wrk }

    /// Whether the client runs `benchCase`; the table shows "—" for the ones it doesn't.
    func supports(_ benchCase: BenchCase) -> Bool {
        switch self {
        case .curl: return benchCase != .concurrentSmall
        case .wrk, .courierSessionHTTPTypes, .courierSessionTyped, .courierSessionMonitor, .courierSessionEvents:
            return benchCase.isRequestRate
        default: return true
        }
    }

    /// Whether the child reports the body bytes of every small GET (wrk reports only statuses).
    var checksBodyBytes: Bool { self != .wrk }
}
