public import CourierEngine
#if canImport(FoundationNetworking)
import Foundation
public import FoundationNetworking
#else
public import Foundation
#endif
import NIOHTTP1
import Synchronization

/// Compresses request bodies (gzip or deflate) as they are sent: an interceptor, like
/// Alamofire's `DeflateRequestCompressor`, but streaming. A body of any size, a file or a
/// multipart form included, is read, compressed and written a piece at a time, so memory stays
/// bounded (the engine's `RequestBody.compressed(with:level:)`).
///
/// ```swift
/// manager.interceptor = RequestCompressor(coding: .gzip)
/// ```
///
/// A compressed request carries `Content-Encoding` and no `Content-Length`: it goes out
/// chunked on HTTP/1.1 and as DATA frames on HTTP/2. A body is left as it is when:
/// - the request already has a `Content-Encoding` (it is encoded already);
/// - its size is known and smaller than ``minimumSize`` (a stream of unknown size is
///   compressed);
/// - ``shouldCompress`` says no for the request;
/// - an earlier compressed request to the same origin (scheme, host, port) was answered
///   `415 Unsupported Media Type`: that origin gets plain bodies from then on. The attempt that
///   got the 415 is sent again, uncompressed, when its body can be sent again (bytes, a file,
///   a multipart form), as a retry (``SessionTask/retryCount`` counts it).
///
/// The compression happens as the request leaves the session, on every hop (a 307 or 308
/// redirect, an answer to a challenge): ``SessionTask/currentRequest`` shows the request
/// before it, and upload progress counts the bytes sent, compressed. A chain
/// (``Interceptor``) uses its first compressor. Thread-safe.
public final class RequestCompressor: RequestInterceptor {
    /// The content coding used.
    public let coding: ContentCoding
    /// Bodies known to be smaller than this many bytes are sent as they are. 1024 by default.
    public let minimumSize: Int64
    /// zlib's compression level, 1 (fastest) to 9 (smallest). 6 by default (zlib's).
    public let level: Int
    /// Whether a request's body is compressed (besides the rules above). Always, by default.
    public let shouldCompress: @Sendable (URLRequest) -> Bool
    /// Origins that answered a compressed body with 415. Bounded: past the cap, the set starts
    /// over (a forgotten origin costs one more 415 and a retry).
    private let refusingOrigins = Mutex<Set<CredentialScope.Origin>>([])
    private static let maximumRefusingOrigins = 1_000

    /// A compressor.
    /// - Parameters:
    ///   - coding: `gzip` (the default) or `deflate` (the zlib format, as HTTP defines it).
    ///   - minimumSize: bodies known to be smaller are sent as they are (default 1024 bytes).
    ///   - level: zlib's level, 1 to 9 (default 6); another value means 6.
    ///   - shouldCompress: decides per request; called when the request is sent.
    public init(
        coding: ContentCoding = .gzip, minimumSize: Int64 = 1024, level: Int = 6,
        shouldCompress: @escaping @Sendable (URLRequest) -> Bool = { _ in true }
    ) {
        self.coding = coding
        self.minimumSize = max(0, minimumSize)
        self.level = (1...9).contains(level) ? level : 6
        self.shouldCompress = shouldCompress
    }

    /// Retries, once, an attempt whose compressed body got `415 Unsupported Media Type`, and
    /// remembers its origin (later requests there are sent uncompressed). Otherwise
    /// ``RetryDecision/doNotRetry``.
    public func retry(_ task: SessionTask, dueTo error: any Error, response: HTTPURLResponse?) async -> RetryDecision {
        guard response?.statusCode == 415, let sent = task.snapshot.withLock({ $0.requestBodyCoding }), sent.compressor === self,
            let origin = CredentialScope.Origin(task.currentRequest?.url)
        else { return .doNotRetry }
        refusingOrigins.withLock { origins in
            if origins.count >= Self.maximumRefusingOrigins { origins.removeAll() }
            origins.insert(origin)
        }
        return .retry
    }

    /// Whether `origin` refused a compressed body before.
    func hasRefused(_ url: URL?) -> Bool {
        guard let origin = CredentialScope.Origin(url) else { return false }
        return refusingOrigins.withLock { $0.contains(origin) }
    }

    /// The coding to send `request`'s body in, with `length` its size when known; nil to send
    /// it as it is.
    func coding(for request: URLRequest, bodyLength: Int64?) -> ContentCoding? {
        if request.value(forHTTPHeaderField: "Content-Encoding") != nil { return nil }
        if let bodyLength, bodyLength < max(minimumSize, 1) { return nil }
        guard !hasRefused(request.url), shouldCompress(request) else { return nil }
        return coding
    }

    /// The compressor of `interceptor`: itself, or the first of a chain's (depth first).
    static func find(in interceptor: (any RequestInterceptor)?) -> RequestCompressor? {
        switch interceptor {
        case let compressor as RequestCompressor: return compressor
        case let chain as Interceptor:
            for member in chain.interceptors {
                if let found = find(in: member) { return found }
            }
            return nil
        default: return nil
        }
    }

    /// Compresses `engineRequest`'s body when the rules say so (made from `request`, as the
    /// session is about to send it): the body becomes the compressed stream, `Content-Encoding`
    /// is set and `Content-Length` dropped. Returns what was applied, or nil.
    func apply(to engineRequest: inout EngineRequest, request: URLRequest) -> RequestBodyCoding? {
        guard let body = engineRequest.body, let chosen = coding(for: request, bodyLength: body.expectedLength) else { return nil }
        engineRequest.body = body.compressed(with: chosen, level: level)
        engineRequest.headers.remove(name: "Content-Length")
        engineRequest.headers.replaceOrAdd(name: "Content-Encoding", value: chosen.rawValue)
        return RequestBodyCoding(coding: chosen, compressor: self)
    }
}

/// What an attempt's body was compressed with, and by which compressor (kept on the task for
/// the compressor's 415 rule).
struct RequestBodyCoding: Sendable {
    var coding: ContentCoding
    let compressor: RequestCompressor
}
