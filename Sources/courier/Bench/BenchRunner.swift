import Courier
import Foundation
import Synchronization
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Drives a benchmark on Courier's session layer: `concurrency` workers, each sending one
/// data task at a time through one `URLSessionManager` (an `HTTPResponseSerializer` that
/// accepts any status and content type, so every response counts by its status) until the
/// request budget or the time is used up.
struct BenchRunner: Sendable {
    /// When to stop sending.
    enum Limit: Sendable {
        /// After this many requests in total.
        case requests(Int)
        /// When this much time has passed (requests in flight then still finish).
        case duration(Duration)
    }

    let request: URLRequest
    let limit: Limit
    let concurrency: Int
    let timeout: TimeInterval
    /// Trusted besides the system roots (DER).
    let additionalTrustRootsDER: [[UInt8]]

    /// Runs the benchmark and returns the tally and the wall time it took.
    func run() async -> (tally: BenchTally, elapsed: Duration) {
        var configuration = SessionConfiguration()
        configuration.httpMaximumConnectionsPerHost = concurrency
        configuration.timeoutIntervalForRequest = timeout
        configuration.connectTimeout = timeout
        configuration.tls.additionalTrustRootsDER = additionalTrustRootsDER
        let manager = URLSessionManager(configuration: configuration)
        let serializer = HTTPResponseSerializer()
        serializer.acceptableStatusCodes = nil
        manager.responseSerializer = serializer

        let tally = SharedTally()
        let tickets = LockedCounter()
        let clock = ContinuousClock()
        let started = clock.now
        let workers: Int
        switch limit {
        case .requests(let count): workers = min(concurrency, count)
        case .duration: workers = concurrency
        }
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<workers {
                group.addTask {
                    while shouldSend(tickets: tickets, started: started, clock: clock) {
                        let sample = await send(on: manager, clock: clock)
                        tally.record(sample)
                    }
                }
            }
        }
        let elapsed = clock.now - started
        manager.invalidateSessionCancelingTasks(false, resetSession: false)
        return (tally.value, elapsed)
    }

    private func shouldSend(tickets: LockedCounter, started: ContinuousClock.Instant, clock: ContinuousClock) -> Bool {
        switch limit {
        case .requests(let count): return tickets.increment() <= count
        case .duration(let duration): return clock.now - started < duration
        }
    }

    /// Sends one request and measures it from before the task is created until its
    /// completion runs (monotonic clock).
    private func send(on manager: URLSessionManager, clock: ContinuousClock) async -> BenchSample {
        let start = clock.now
        let holder = TaskHolder()
        let (response, error): (HTTPURLResponse?, (any Error)?) = await withCheckedContinuation { continuation in
            let task = manager.dataTask(with: request, completionHandler: { response, _, error in
                continuation.resume(returning: (response, error))
            })
            holder.task = task
            task.resume()
        }
        let latency = clock.now - start
        let metrics = holder.task?.metrics
        let bytes = (metrics?.responseHeaderBytesReceived ?? 0) + (metrics?.responseBodyBytesReceived ?? 0)
        // With every status and type accepted, an error means no (complete) response.
        return BenchSample(
            latency: latency, statusCode: error == nil ? response?.statusCode : nil, bytesReceived: bytes,
            error: error.map(Self.classify))
    }

    /// Groups an error under a short kind.
    static func classify(_ error: any Error) -> BenchError {
        guard let error = error as? CourierError else {
            return BenchError(kind: "other", message: MessageSanitizer.clean(String(describing: error)))
        }
        let kind: String
        switch error {
        case .cannotConnect: kind = "connect"
        case .timedOut: kind = "timeout"
        case .connectionLost: kind = "connection lost"
        case .serverTrustRejected, .engine(.tlsHandshakeFailed): kind = "tls"
        case .tooManyRedirects: kind = "redirects"
        case .cancelled: kind = "cancelled"
        case .unacceptableStatusCode, .unacceptableContentType, .responseSerializationFailed: kind = "response"
        case .requestSerializationFailed: kind = "request"
        default: kind = "other"
        }
        if case .engine(.tlsHandshakeFailed(let reason)) = error {
            return BenchError(kind: kind, message: "TLS handshake failed: " + MessageSanitizer.tlsReason(reason))
        }
        // Messages are printed: no URL passwords, no library source paths.
        return BenchError(kind: kind, message: MessageSanitizer.clean(error.description))
    }
}

/// The task of one request, set before it is resumed and read after its completion.
private final class TaskHolder: Sendable {
    private let value = Mutex<DataTask?>(nil)

    var task: DataTask? {
        get { value.withLock { $0 } }
        set { value.withLock { $0 = newValue } }
    }
}

/// The run's tally, shared by the workers.
private final class SharedTally: Sendable {
    private let tally = Mutex(BenchTally())

    var value: BenchTally { tally.withLock { $0 } }

    func record(_ sample: BenchSample) {
        tally.withLock { $0.record(sample) }
    }
}
