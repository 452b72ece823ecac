public import Foundation

/// The timings and counts of one request, like `URLSessionTaskTransactionMetrics`.
///
/// Phases that did not happen (DNS for an IP literal, connect and TLS on a reused connection)
/// stay nil. Times are wall-clock `Date`s; durations are differences of them.
public struct EngineMetrics: Sendable, Equatable {
    // The values live in one copy-on-write box: a request's metrics travel through events,
    // task snapshots and responses to the caller, and ~300 bytes copied at each step (and
    // held in every async frame on the way, which pushed them past the task allocator's slab)
    // cost more than the one small allocation per request the box takes.
    private var storage: Storage

    /// When the engine accepted the request.
    public var fetchStart: Date {
        get { storage.values.fetchStart }
        set { unique().values.fetchStart = newValue }
    }
    /// Name resolution.
    public var domainLookupStart: Date? {
        get { storage.values.domainLookupStart }
        set { unique().values.domainLookupStart = newValue }
    }
    /// Name resolution finished.
    public var domainLookupEnd: Date? {
        get { storage.values.domainLookupEnd }
        set { unique().values.domainLookupEnd = newValue }
    }
    /// TCP connect began.
    public var connectStart: Date? {
        get { storage.values.connectStart }
        set { unique().values.connectStart = newValue }
    }
    /// TCP connect plus TLS handshake finished.
    public var connectEnd: Date? {
        get { storage.values.connectEnd }
        set { unique().values.connectEnd = newValue }
    }
    /// TLS handshake began.
    public var secureConnectionStart: Date? {
        get { storage.values.secureConnectionStart }
        set { unique().values.secureConnectionStart = newValue }
    }
    /// TLS handshake finished.
    public var secureConnectionEnd: Date? {
        get { storage.values.secureConnectionEnd }
        set { unique().values.secureConnectionEnd = newValue }
    }
    /// The request head started on the wire.
    public var requestStart: Date? {
        get { storage.values.requestStart }
        set { unique().values.requestStart = newValue }
    }
    /// The last request byte was written.
    public var requestEnd: Date? {
        get { storage.values.requestEnd }
        set { unique().values.requestEnd = newValue }
    }
    /// The first byte of the response arrived.
    public var responseStart: Date? {
        get { storage.values.responseStart }
        set { unique().values.responseStart = newValue }
    }
    /// The last byte of the response arrived.
    public var responseEnd: Date? {
        get { storage.values.responseEnd }
        set { unique().values.responseEnd = newValue }
    }
    /// Bytes of request head written.
    public var requestHeaderBytesSent: Int64 {
        get { storage.values.requestHeaderBytesSent }
        set { unique().values.requestHeaderBytesSent = newValue }
    }
    /// Bytes of request body written.
    public var requestBodyBytesSent: Int64 {
        get { storage.values.requestBodyBytesSent }
        set { unique().values.requestBodyBytesSent = newValue }
    }
    /// Bytes of response head received (status line and headers, approximately as framed).
    public var responseHeaderBytesReceived: Int64 {
        get { storage.values.responseHeaderBytesReceived }
        set { unique().values.responseHeaderBytesReceived = newValue }
    }
    /// Bytes of response body received (after decompression when it applies).
    public var responseBodyBytesReceived: Int64 {
        get { storage.values.responseBodyBytesReceived }
        set { unique().values.responseBodyBytesReceived = newValue }
    }
    /// Whether the request ran on a connection that had served an earlier request.
    public var isReusedConnection: Bool {
        get { storage.values.isReusedConnection }
        set { unique().values.isReusedConnection = newValue }
    }
    /// Local address of the connection.
    public var localAddress: String? {
        get { storage.values.localAddress }
        set { unique().values.localAddress = newValue }
    }
    /// Local port of the connection.
    public var localPort: Int? {
        get { storage.values.localPort }
        set { unique().values.localPort = newValue }
    }
    /// Remote address of the connection: the IP address connected to, or a Unix domain
    /// socket's path (``remotePort`` is nil then).
    public var remoteAddress: String? {
        get { storage.values.remoteAddress }
        set { unique().values.remoteAddress = newValue }
    }
    /// Remote port of the connection.
    public var remotePort: Int? {
        get { storage.values.remotePort }
        set { unique().values.remotePort = newValue }
    }
    /// Whether an override, not the resolver, chose the address the connection went to
    /// (``remoteAddress``): `.resolve` when a ``ResolveOverride`` gave the host's addresses,
    /// `.connectTo` when a ``ConnectToOverride`` sent the connection to another host or port.
    /// Nil when the resolver answered, the URL's host was an IP literal, or the connection went
    /// to a Unix domain socket.
    public var addressOverride: AddressOverride? {
        get { storage.values.addressOverride }
        set { unique().values.addressOverride = newValue }
    }
    /// The protocol spoken: `h2` (HTTP/2), `http/1.1` (or `http/1.0` when the server answered
    /// so). Over HTTP/2, ``isReusedConnection`` says the request was a later stream on a
    /// connection that had carried others.
    public var networkProtocolName: String? {
        get { storage.values.networkProtocolName }
        set { unique().values.networkProtocolName = newValue }
    }
    /// The negotiated TLS version, e.g. `TLSv1.3`; nil for plain HTTP.
    public var tlsProtocolVersion: String? {
        get { storage.values.tlsProtocolVersion }
        set { unique().values.tlsProtocolVersion = newValue }
    }
    /// Where the response came from (`URLSessionTaskTransactionMetrics.resourceFetchType`):
    /// the network (the default), or the session's HTTP cache without a request (a 304 that
    /// revalidated a stored response is `.networkLoad` with ``revalidatedFromCache``).
    public var resourceFetchType: ResourceFetchType {
        get { storage.values.resourceFetchType }
        set { unique().values.resourceFetchType = newValue }
    }
    /// Whether a stored response was validated with the server (a conditional request answered
    /// `304`) and its stored body delivered.
    public var revalidatedFromCache: Bool {
        get { storage.values.revalidatedFromCache }
        set { unique().values.revalidatedFromCache = newValue }
    }

    /// For a request that ended while it waited for a new connection (its deadline passed, or it
    /// was cancelled): the step that connection's setup was in then. Nil otherwise (the request
    /// had a connection, or waited for one already open).
    public var connectionSetupPhase: ConnectionSetupPhase? {
        get { storage.values.connectionSetupPhase }
        set { unique().values.connectionSetupPhase = newValue }
    }

    /// Earlier attempts of this request, each with its own timings: it was first sent on a
    /// reused keep-alive connection that turned out to be closed (the server had dropped it
    /// while it sat idle) before any response byte, and was sent again on a new connection.
    /// That happens once at most, for an idempotent request or one of which nothing was
    /// written. Empty when the first attempt was the one that answered.
    public var replayedAttempts: [EngineMetrics] {
        get { storage.values.replayedAttempts }
        set { unique().values.replayedAttempts = newValue }
    }

    /// The TCP connect attempts of a new connection, in the order they started: NIO's Happy
    /// Eyeballs connector may try several addresses (IPv6 and IPv4, staggered) and keeps the
    /// first that connects; the others end with an error (refused, unreachable, or cancelled
    /// when another won). Empty on a reused connection.
    public var connectAttempts: [ConnectAttempt] {
        get { storage.values.connectAttempts }
        set { unique().values.connectAttempts = newValue }
    }

    /// One TCP connect attempt to one address.
    public struct ConnectAttempt: Sendable, Equatable {
        /// The address tried (an IP address, or a Unix socket's path).
        public var address: String
        /// The port (nil for a Unix socket).
        public var port: Int?
        /// When the attempt began.
        public var start: Date
        /// When it connected or failed.
        public var end: Date
        /// Why it failed; nil when it connected.
        public var error: String?

        /// Creates a description of an attempt.
        public init(address: String, port: Int?, start: Date, end: Date, error: String?) {
            self.address = address
            self.port = port
            self.start = start
            self.end = end
            self.error = error
        }
    }

    /// HTTP/2 connection coalescing: the host whose connection carried this request (a
    /// connection opened for another name that the server's certificate also covers, at the
    /// same address), or nil when it went on a connection of its own host.
    public var coalescedConnectionHost: String? {
        get { storage.values.coalescedConnectionHost }
        set { unique().values.coalescedConnectionHost = newValue }
    }

    /// Set by the session (Courier's `SessionConfiguration.hsts`) when HTTP Strict Transport
    /// Security rewrote this exchange's `http://` URL to `https://` before sending: the URL as
    /// it was asked for. Nil otherwise; the engine itself never sets it.
    public var hstsUpgradedFrom: URL? {
        get { storage.values.hstsUpgradedFrom }
        set { unique().values.hstsUpgradedFrom = newValue }
    }

    /// A copy with a box of its own, for a snapshot handed to another thread while the engine
    /// goes on filling in its value: the two never share a box, so the engine's next write
    /// needs no uniqueness check that races with the other thread letting its copy go (the
    /// check is correct, but the release it pairs with happens in the uninstrumented runtime,
    /// which ThreadSanitizer cannot see).
    func detached() -> EngineMetrics {
        var copy = self
        copy.storage = Storage(storage.values)
        return copy
    }

    /// The box, copied first when another value shares it.
    private mutating func unique() -> Storage {
        if !isKnownUniquelyReferenced(&storage) { storage = Storage(storage.values) }
        return storage
    }

    /// Whether both hold the same values (every property compared; the box shared is a shortcut).
    public static func == (lhs: EngineMetrics, rhs: EngineMetrics) -> Bool {
        lhs.storage === rhs.storage || lhs.storage.values == rhs.storage.values
    }

    /// The stored values; the box's `values` is only mutated while uniquely referenced.
    private final class Storage: @unchecked Sendable {
        var values: Values

        init(_ values: Values) {
            self.values = values
        }
    }

    /// The metrics' values, documented on the properties above.
    private struct Values: Equatable {
        var fetchStart: Date
        var domainLookupStart: Date?
        var domainLookupEnd: Date?
        var connectStart: Date?
        var connectEnd: Date?
        var secureConnectionStart: Date?
        var secureConnectionEnd: Date?
        var requestStart: Date?
        var requestEnd: Date?
        var responseStart: Date?
        var responseEnd: Date?
        var requestHeaderBytesSent: Int64 = 0
        var requestBodyBytesSent: Int64 = 0
        var responseHeaderBytesReceived: Int64 = 0
        var responseBodyBytesReceived: Int64 = 0
        var isReusedConnection: Bool = false
        var localAddress: String?
        var localPort: Int?
        var remoteAddress: String?
        var remotePort: Int?
        var addressOverride: AddressOverride?
        var networkProtocolName: String?
        var tlsProtocolVersion: String?
        var resourceFetchType: ResourceFetchType = .networkLoad
        var revalidatedFromCache: Bool = false
        var connectionSetupPhase: ConnectionSetupPhase?
        var replayedAttempts: [EngineMetrics] = []
        var connectAttempts: [ConnectAttempt] = []
        var coalescedConnectionHost: String?
        var hstsUpgradedFrom: URL?
    }

    /// Where a response came from.
    public enum ResourceFetchType: String, Sendable, Equatable {
        /// Loaded over the network.
        case networkLoad
        /// Served from the local HTTP cache; nothing was sent.
        case localCache
    }

    /// Which override chose a connection's address (``addressOverride``).
    public enum AddressOverride: String, Sendable, Equatable {
        /// A ``ResolveOverride`` (curl's `--resolve`) gave the addresses of the host.
        case resolve
        /// A ``ConnectToOverride`` (curl's `--connect-to`) sent the connection to another host
        /// or port (whose address came from a resolve entry or the resolver).
        case connectTo
    }

    /// Metrics for a request accepted at `fetchStart`.
    public init(fetchStart: Date = Date()) {
        storage = Storage(Values(fetchStart: fetchStart))
    }
}

extension EngineMetrics {
    /// Copies what `info` knows about the connection: its addresses and TLS version, and with
    /// `includingSetup` (a new connection) the name lookup, connect and TLS timings.
    mutating func record(_ info: ConnectionInfo, includingSetup: Bool) {
        if includingSetup {
            domainLookupStart = info.domainLookupStart
            domainLookupEnd = info.domainLookupEnd
            connectStart = info.connectStart
            connectEnd = info.connectEnd
            secureConnectionStart = info.secureConnectionStart
            secureConnectionEnd = info.secureConnectionEnd
        }
        localAddress = info.localAddress?.ip
        localPort = info.localAddress?.port
        remoteAddress = info.remoteAddress?.ip
        remotePort = info.remoteAddress?.port
        addressOverride = info.addressOverride
        tlsProtocolVersion = info.tlsProtocolVersion
        if includingSetup { connectAttempts = info.connectAttempts }
    }
}

/// What the engine knows about a connection, copied into each request's metrics.
struct ConnectionInfo: Sendable {
    var domainLookupStart: Date?
    var domainLookupEnd: Date?
    var connectStart: Date?
    var connectEnd: Date?
    var secureConnectionStart: Date?
    var secureConnectionEnd: Date?
    var localAddress: SocketAddressDescription?
    var remoteAddress: SocketAddressDescription?
    var addressOverride: EngineMetrics.AddressOverride?
    var tlsProtocolVersion: String?
    /// The TCP connect attempts (Happy Eyeballs may make several).
    var connectAttempts: [EngineMetrics.ConnectAttempt] = []
    /// The server's certificate chain as the engine's ``ServerTrustVerifier`` trusted it (nil
    /// without a verifier, or for plain HTTP): what connection coalescing judges another
    /// host name against.
    var trustedChainDER: [[UInt8]]?

    struct SocketAddressDescription: Sendable {
        var ip: String?
        var port: Int?
    }
}
