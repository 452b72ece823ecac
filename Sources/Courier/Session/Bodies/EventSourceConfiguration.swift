/// How an ``EventSource`` reconnects: the reconnection time before a server sets one with
/// `retry:`, the backoff while the server fails, when to give up, and whether to wait for the
/// network while offline. Every property has a default that suits a long-lived feed.
///
/// ```swift
/// var configuration = EventSourceConfiguration()
/// configuration.maximumReconnectionDelay = .seconds(30)
/// configuration.maximumConsecutiveFailures = 10
/// let source = manager.eventSource(for: URLRequest(url: url), configuration: configuration)
/// ```
public struct EventSourceConfiguration: Sendable {
    /// The wait before reconnecting after the stream ends or drops, until the server sets
    /// another with a `retry:` field (browsers use a few seconds). Also the base of the backoff.
    /// Default 3 s.
    public var initialReconnectionTime: Duration

    /// The longest wait the backoff grows to while connection attempts fail. Default 60 s. (A
    /// `Retry-After` asking for longer is honoured, up to an hour.)
    public var maximumReconnectionDelay: Duration

    /// How much each failed attempt in a row multiplies the wait: the n-th failure waits
    /// reconnection time × multiplier^(n−1), at most ``maximumReconnectionDelay``. Default 2.
    public var backoffMultiplier: Double

    /// The share of a backoff wait taken off at random (0 none, 1 anything down to zero), so
    /// that clients a server dropped together don't all come back at the same moment.
    /// Default 0.25. The plain reconnection time after a stream that delivered events is not
    /// jittered.
    public var jitter: Double

    /// After this many failed connection attempts in a row (connection errors, 5xx, 408, 429,
    /// streams that ended before any event) the source gives up and throws the last failure;
    /// nil (default) never gives up, as browsers don't.
    public var maximumConsecutiveFailures: Int?

    /// The longest line, and the most data one event may gather, in bytes; past either the
    /// iteration throws ``CourierError/responseBodyTooLarge(url:limit:contentLength:received:)``.
    /// Default 1 MiB.
    public var maximumLineLength: Int

    /// When set, a connection attempt that fails because the host can't be reached
    /// (``CourierError/cannotConnect(url:reason:)`` or a connect timeout) while reachability
    /// says the host is not reachable waits up to this long for it to become reachable, then
    /// reconnects at once, instead of backing off blind. Default nil: no waiting.
    public var waitsForConnectivity: Duration?

    /// The reachability watched for ``waitsForConnectivity``; the caller starts and stops its
    /// monitoring. Nil (default): the source makes a ``NetworkReachabilityManager`` for the
    /// request's host and monitors it while it runs. Unused when ``waitsForConnectivity`` is nil.
    public var reachability: NetworkReachabilityManager?

    /// Creates a configuration; every parameter has the default documented on its property.
    public init(
        initialReconnectionTime: Duration = .seconds(3), maximumReconnectionDelay: Duration = .seconds(60),
        backoffMultiplier: Double = 2, jitter: Double = 0.25, maximumConsecutiveFailures: Int? = nil,
        maximumLineLength: Int = 1 << 20, waitsForConnectivity: Duration? = nil, reachability: NetworkReachabilityManager? = nil
    ) {
        self.initialReconnectionTime = initialReconnectionTime
        self.maximumReconnectionDelay = maximumReconnectionDelay
        self.backoffMultiplier = backoffMultiplier
        self.jitter = jitter
        self.maximumConsecutiveFailures = maximumConsecutiveFailures
        self.maximumLineLength = maximumLineLength
        self.waitsForConnectivity = waitsForConnectivity
        self.reachability = reachability
    }
}
