public import Foundation

/// The timings and counts of one request, like `URLSessionTaskTransactionMetrics`.
///
/// Phases that did not happen (DNS for an IP literal, connect and TLS on a reused connection)
/// stay nil. Times are wall-clock `Date`s; durations are differences of them.
public struct EngineMetrics: Sendable, Equatable {
    /// When the engine accepted the request.
    public var fetchStart: Date
    /// Name resolution.
    public var domainLookupStart: Date?
    /// Name resolution finished.
    public var domainLookupEnd: Date?
    /// TCP connect began.
    public var connectStart: Date?
    /// TCP connect plus TLS handshake finished.
    public var connectEnd: Date?
    /// TLS handshake began.
    public var secureConnectionStart: Date?
    /// TLS handshake finished.
    public var secureConnectionEnd: Date?
    /// The request head started on the wire.
    public var requestStart: Date?
    /// The last request byte was written.
    public var requestEnd: Date?
    /// The first byte of the response arrived.
    public var responseStart: Date?
    /// The last byte of the response arrived.
    public var responseEnd: Date?
    /// Bytes of request head written.
    public var requestHeaderBytesSent: Int64 = 0
    /// Bytes of request body written.
    public var requestBodyBytesSent: Int64 = 0
    /// Bytes of response head received (status line and headers, approximately as framed).
    public var responseHeaderBytesReceived: Int64 = 0
    /// Bytes of response body received (after decompression when it applies).
    public var responseBodyBytesReceived: Int64 = 0
    /// Whether the request ran on a connection that had served an earlier request.
    public var isReusedConnection: Bool = false
    /// Local address of the connection.
    public var localAddress: String?
    /// Local port of the connection.
    public var localPort: Int?
    /// Remote address of the connection.
    public var remoteAddress: String?
    /// Remote port of the connection.
    public var remotePort: Int?
    /// The protocol spoken: `h2` (HTTP/2), `http/1.1` (or `http/1.0` when the server answered
    /// so). Over HTTP/2, ``isReusedConnection`` says the request was a later stream on a
    /// connection that had carried others.
    public var networkProtocolName: String?
    /// The negotiated TLS version, e.g. `TLSv1.3`; nil for plain HTTP.
    public var tlsProtocolVersion: String?
    /// Where the response came from (`URLSessionTaskTransactionMetrics.resourceFetchType`):
    /// the network (the default), or the session's HTTP cache without a request (a 304 that
    /// revalidated a stored response is `.networkLoad` with ``revalidatedFromCache``).
    public var resourceFetchType: ResourceFetchType = .networkLoad
    /// Whether a stored response was validated with the server (a conditional request answered
    /// `304`) and its stored body delivered.
    public var revalidatedFromCache: Bool = false

    /// Where a response came from.
    public enum ResourceFetchType: String, Sendable, Equatable {
        /// Loaded over the network.
        case networkLoad
        /// Served from the local HTTP cache; nothing was sent.
        case localCache
    }

    /// Metrics for a request accepted at `fetchStart`.
    public init(fetchStart: Date = Date()) {
        self.fetchStart = fetchStart
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
    var tlsProtocolVersion: String?

    struct SocketAddressDescription: Sendable {
        var ip: String?
        var port: Int?
    }
}
