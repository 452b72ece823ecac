public import Foundation

/// One step of a task, as ``SessionEventMonitor/task(_:didReceive:)`` reports it: a phase
/// starting or ending (the call, the wait for a connection, name lookup, connect, TLS, the
/// request's head and body, the response's head and body), a connection acquired or released,
/// or a decision the session took (a redirect followed or refused, a challenge answered, a
/// retry decided or declined, the cache's answer, an HSTS upgrade, a replay on a new
/// connection). OkHttp's `EventListener` is the model.
///
/// Every event carries the instant it happened (``date``) and the exchange it belongs to
/// (``hop``: 0 for the first request, one more for each redirect, answer to a challenge or
/// retry). A task's events reach its monitors one at a time, in the order they happened, on the
/// session's monitor queue (`callEnd` where the task finishes, last), never on an event loop.
/// The steps of getting a connection and
/// sending the request (name lookup, connect, TLS, the connection acquired, the request's head
/// and body) are reported with the exchange's next step the engine reports (its response head
/// at the latest, or its failure), stamped with the instants they happened: reporting them
/// apart would cost every request a thread hop more.
public struct TaskEvent: Sendable, CustomStringConvertible {
    /// What happened.
    public let kind: Kind
    /// When it happened.
    public let date: Date
    /// The exchange it belongs to: 0 for the first, one more for each later hop.
    public let hop: Int

    /// Creates an event.
    public init(kind: Kind, date: Date, hop: Int) {
        self.kind = kind
        self.date = date
        self.hop = hop
    }

    /// The stretches of a task that start and end.
    public enum Phase: String, Sendable, Hashable, CaseIterable {
        /// The whole task: from `resume()` to its completion.
        case call
        /// Waiting for a connection: an idle one of the pool, a new one being opened, or a free
        /// stream on an HTTP/2 connection. Ends when the request has one.
        case connectionWait
        /// Name lookup of the host (none for an IP literal, a Unix socket or a reused connection).
        case domainLookup
        /// Opening the connection: TCP connect, a proxy's handshake and TLS, together.
        case connect
        /// The TLS handshake (inside ``connect``).
        case secureConnect
        /// Writing the request's head.
        case requestHeaders
        /// Writing the request's body (only for a request with one).
        case requestBody
        /// Receiving the response's head.
        case responseHeaders
        /// Receiving the response's body.
        case responseBody
    }

    /// What an event says.
    public enum Kind: Sendable {
        /// A phase began.
        case started(Phase)
        /// A phase ended.
        case ended(Phase)
        /// A phase ended in a failure, with the error that ended it.
        case failed(Phase, error: any Error)
        /// One TCP connect attempt of a new connection began (Happy Eyeballs may try several
        /// addresses, staggered; inside ``Phase/connect``).
        case connectAttemptStarted(address: String, port: Int?)
        /// That attempt connected (`error` nil), or failed: refused, unreachable, or given up
        /// when another address connected first.
        case connectAttemptEnded(address: String, port: Int?, error: String?)
        /// The request got its connection.
        case connectionAcquired(Connection)
        /// The exchange is done with its connection (it goes back to the pool, or closes).
        case connectionReleased
        /// The session decided something about the task.
        case decision(Decision)
    }

    /// The connection a request went out on.
    public struct Connection: Sendable, Equatable {
        /// Whether it served an earlier request before this one.
        public var isReused: Bool
        /// `http/1.1`, `http/1.0` or `h2`, when known.
        public var networkProtocol: String?
        /// The remote address (an IP address, or a Unix socket's path).
        public var remoteAddress: String?
        /// The remote port (nil for a Unix socket).
        public var remotePort: Int?
        /// The TLS version, for an https connection.
        public var tlsProtocolVersion: String?
        /// The host whose HTTP/2 connection carried this request (connection coalescing), if
        /// not the request's own.
        public var coalescedOnto: String?

        /// Creates a description of a connection.
        public init(
            isReused: Bool, networkProtocol: String? = nil, remoteAddress: String? = nil, remotePort: Int? = nil,
            tlsProtocolVersion: String? = nil, coalescedOnto: String? = nil
        ) {
            self.isReused = isReused
            self.networkProtocol = networkProtocol
            self.remoteAddress = remoteAddress
            self.remotePort = remotePort
            self.tlsProtocolVersion = tlsProtocolVersion
            self.coalescedOnto = coalescedOnto
        }
    }

    /// A decision the session took for a task.
    public enum Decision: Sendable, Equatable {
        /// A redirect (`statusCode`) is followed to `url`.
        case redirectFollowed(statusCode: Int, to: URL)
        /// A redirect (`statusCode`) is not followed, and why (the limit, a bad `Location`, the
        /// redirect block said no, following turned off).
        case redirectRefused(statusCode: Int, reason: String)
        /// A `401` (or `407`) challenge is answered with credentials for `scheme` (`Basic`,
        /// `Digest`).
        case authenticationAnswered(statusCode: Int, scheme: String)
        /// An interceptor decided to send the task again after `delay` seconds, because of the
        /// error described.
        case retryDecided(delay: TimeInterval, reason: String)
        /// An interceptor was asked and declined to send the task again (the error described).
        case retryDeclined(reason: String)
        /// The HTTP cache's answer.
        case cache(CacheDecision)
        /// HSTS turned an `http` URL into `https` before anything was sent.
        case hstsUpgrade(from: URL, to: URL)
        /// The request was sent again, once, on a new connection: the reused one turned out to
        /// be closed before any response byte arrived (see `EngineMetrics.replayedAttempts`).
        case replayedOnNewConnection(reason: String)
    }

    /// What the HTTP cache did for an exchange.
    public enum CacheDecision: String, Sendable, Equatable {
        /// Answered from the store; nothing was sent.
        case hit
        /// Nothing usable stored: sent to the network (the response may be stored).
        case miss
        /// A stored response is being revalidated: the request went out conditional.
        case conditionalRequest
        /// The server confirmed the stored response (`304`): it is the answer.
        case revalidated
    }

    /// "hop 0 started connect", "hop 1 decision redirectFollowed(302 → https://…)".
    public var description: String {
        "hop \(hop) \(kind.name)"
    }
}

extension TaskEvent.Kind {
    /// A short, stable name: `callStart`, `connectEnd`, `connectFailed`, `connectionAcquired`,
    /// `redirectFollowed`, `cacheHit` (OkHttp's spellings where it has the event).
    public var name: String {
        switch self {
        case .started(let phase): return "\(phase.rawValue)Start"
        case .ended(let phase): return "\(phase.rawValue)End"
        case .failed(let phase, _): return "\(phase.rawValue)Failed"
        case .connectAttemptStarted: return "connectAttemptStart"
        case .connectAttemptEnded(_, _, let error): return error == nil ? "connectAttemptEnd" : "connectAttemptFailed"
        case .connectionAcquired: return "connectionAcquired"
        case .connectionReleased: return "connectionReleased"
        case .decision(let decision): return decision.name
        }
    }

    /// The phase this event starts or ends, if it is one of those.
    public var phase: TaskEvent.Phase? {
        switch self {
        case .started(let phase), .ended(let phase), .failed(let phase, _): return phase
        default: return nil
        }
    }
}

extension TaskEvent.Decision {
    /// A short, stable name: `redirectFollowed`, `retryDeclined`, `cacheHit`, `hstsUpgrade`.
    public var name: String {
        switch self {
        case .redirectFollowed: return "redirectFollowed"
        case .redirectRefused: return "redirectRefused"
        case .authenticationAnswered: return "authenticationAnswered"
        case .retryDecided: return "retryDecided"
        case .retryDeclined: return "retryDeclined"
        case .cache(let cache):
            return "cache" + cache.rawValue.prefix(1).uppercased() + cache.rawValue.dropFirst()
        case .hstsUpgrade: return "hstsUpgrade"
        case .replayedOnNewConnection: return "replayedOnNewConnection"
        }
    }
}
