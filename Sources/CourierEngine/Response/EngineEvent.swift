public import NIOCore
public import NIOHTTP1

/// What happens to a request, in order, as ``HTTPEngine`` reports it.
///
/// Delivered on the connection's event loop, one at a time. `responseHead` comes at most once
/// (interim 1xx responses are skipped), `bodyPart` any number of times, and exactly one of
/// `finished` or `failed` comes last. `metricsUpdated` comes only for a request that asks for
/// it (``EngineRequest/reportsMetricsUpdates``).
public enum EngineEvent: Sendable {
    /// Request body bytes written so far, and the total when known.
    case uploadProgress(sent: Int64, expected: Int64?)
    /// The exchange's metrics so far, when it reached a step: the request got its connection
    /// (the setup's timings are in, and `requestStart`), the request's last byte was written
    /// (`requestEnd`), the final response head arrived (`responseStart`, just before
    /// `responseHead`). Only for a request with ``EngineRequest/reportsMetricsUpdates``.
    case metricsUpdated(EngineMetrics)
    /// The final response's head, delivered as soon as it is parsed.
    case responseHead(HTTPResponseHead)
    /// A chunk of the response body (decompressed when decompression applies).
    case bodyPart(ByteBuffer)
    /// The response ended normally.
    case finished(EngineMetrics)
    /// The request failed; nothing more follows.
    case failed(EngineError, EngineMetrics)

    /// Whether this event ends the request.
    public var isTerminal: Bool {
        switch self {
        case .finished, .failed: return true
        default: return false
        }
    }
}
