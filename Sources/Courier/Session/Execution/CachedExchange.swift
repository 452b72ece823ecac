import CourierEngine
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NIOCore
import NIOHTTP1
import Synchronization

/// The HTTP cache's part in one hop of a task (``SessionConfiguration/cache``). Before the
/// request leaves, ``prepare(_:policy:cache:)`` looks the request up and decides, by
/// ``CacheLookupRule``: answer from the cache (``replay(to:)`` feeds the stored response to the
/// task as engine events, so serializers, completion queue, notifications and progress run as
/// for a network response, with metrics saying `.localCache`), fail without sending
/// (`.returnCacheDataDontLoad`, `only-if-cached`), make the request conditional, or send it
/// as is. While the response arrives, ``intercepting(_:)`` stores a storable response (the
/// body streamed to the store as it is delivered), turns a `304` to its own conditional
/// request into the stored response with merged headers, and invalidates after an unsafe
/// method. Events arrive in order on the task's callback queue.
final class CachedExchange: Sendable {
    /// What to do with the request.
    enum Preparation {
        /// The cache takes no part (no cache, or a safe method other than GET, or the caller's
        /// own conditional or Range request).
        case bypass
        /// Send the (possibly made conditional) request; wrap the event handler with
        /// ``intercepting(_:)``.
        case network(CachedExchange)
        /// Nothing is sent: ``replay(to:)`` delivers the stored response.
        case serve(CachedExchange)
        /// Nothing is sent and nothing usable is stored.
        case unavailable(CourierError)
    }

    private enum Mode {
        /// A GET that may be stored; `validating` is the stored response a conditional request
        /// was made for.
        case lookup(validating: Stored?)
        /// An unsafe method: a success invalidates.
        case invalidate
    }

    /// A stored response and its body.
    struct Stored: Sendable {
        var entry: CacheEntry
        var body: HTTPCache.StoredBody
    }

    private struct State {
        var writer: CacheEntryWriter?
        /// Set when a 304 turned into the stored response: the network body is dropped and the
        /// stored one delivered at the end.
        var replacing: Stored?
    }

    private let cache: HTTPCache
    private let mode: Mode

    /// Whether the request went out conditional, to revalidate a stored response.
    var isConditional: Bool {
        if case .lookup(let validating) = mode { return validating != nil }
        return false
    }
    private let request: EngineRequest
    private let requestTime = Date()
    private let state = Mutex(State())

    private init(cache: HTTPCache, mode: Mode, request: EngineRequest) {
        self.cache = cache
        self.mode = mode
        self.request = request
    }

    /// Decides what the cache does for `request` (sent with `policy`), adding conditional
    /// fields to it when a stored response is to be validated.
    static func prepare(_ request: inout EngineRequest, policy: URLRequest.CachePolicy, cache: HTTPCache?) -> Preparation {
        guard let cache else { return .bypass }
        let method = request.method.uppercased()
        if !CacheInvalidation.safeMethods.contains(method) {
            return .network(CachedExchange(cache: cache, mode: .invalidate, request: request))
        }
        guard CacheLookupRule.participates(method: method, requestHeaders: request.headers),
            let key = CacheKey.key(for: request.url)
        else { return .bypass }
        var stored: Stored?
        let ignoresStored = policy == .reloadIgnoringLocalCacheData || policy == .reloadIgnoringLocalAndRemoteCacheData
        if !ignoresStored, let found = cache.stored(key: key, requestHeaders: request.headers) {
            stored = Stored(entry: found.entry, body: found.body)
        }
        let decision = CacheLookupRule.decide(policy: policy, requestHeaders: request.headers, entry: stored?.entry, now: Date())
        switch decision {
        case .serveStored:
            guard let stored else { return .bypass }
            return .serve(CachedExchange(cache: cache, mode: .lookup(validating: stored), request: request))
        case .validate(let fields):
            for (name, value) in fields { request.headers.replaceOrAdd(name: name, value: value) }
            return .network(CachedExchange(cache: cache, mode: .lookup(validating: stored), request: request))
        case .network:
            stored?.close()
            return .network(CachedExchange(cache: cache, mode: .lookup(validating: nil), request: request))
        case .unavailable:
            stored?.close()
            let reason = policy == .returnCacheDataDontLoad
                ? "the request's cache policy is .returnCacheDataDontLoad"
                : "the request says Cache-Control: only-if-cached"
            return .unavailable(.notCached(url: request.url, reason: reason))
        }
    }

    // MARK: - Serving

    /// Delivers the stored response to `handle` as a head, body chunks and `.finished` with
    /// metrics marked `.localCache`. Runs on the task's callback queue.
    func replay(to handle: @escaping @Sendable (EngineEvent) -> Void) {
        guard case .lookup(let stored?) = mode else { return }
        var metrics = EngineMetrics(fetchStart: requestTime)
        metrics.resourceFetchType = .localCache
        var head = stored.entry.responseHead
        // RFC 9111 §5.1: a response served from a cache carries its current age.
        let age = CacheFreshness.currentAge(of: stored.entry, now: Date())
        head.headers.replaceOrAdd(name: "Age", value: String(Int(min(age, Double(Int32.max)).rounded(.down))))
        metrics.responseStart = Date()
        handle(.responseHead(head))
        send(stored.body, metrics: metrics, to: handle)
    }

    /// Sends a stored body and then `.finished`. A body in memory goes at once, in 64 KiB
    /// chunks, to `handle` (the caller is on the task's callback queue); a body file is read by
    /// the pump, one chunk at a time, through the delivery given to ``attach(deliver:)``, so
    /// the task's reading pauses (a slow download file, stream or callback queue) hold it back
    /// as they hold back the network and the file is never read ahead into memory.
    private func send(_ body: HTTPCache.StoredBody, metrics: EngineMetrics, to handle: @Sendable (EngineEvent) -> Void) {
        var metrics = metrics
        switch body {
        case .data(let data):
            var offset = data.startIndex
            while offset < data.endIndex {
                let end = data.index(offset, offsetBy: StoredBodyReader.chunkSize, limitedBy: data.endIndex) ?? data.endIndex
                handle(.bodyPart(ByteBuffer(bytes: data[offset..<end])))
                offset = end
            }
            metrics.responseEnd = Date()
            metrics.responseBodyBytesReceived = Int64(data.count)
            detach()
            handle(.finished(metrics))
        case .file(let file, let length):
            // The first chunk here: a body that fits in it (most) needs no pump at all.
            var reader = StoredBodyReader(file: file, length: length)
            let first = reader.next()
            if case .chunk(let data) = first { handle(.bodyPart(ByteBuffer(bytes: data))) }
            if case .chunk = first, !reader.isDone {
                let attached = pump.withLock { pump -> Bool in
                    guard pump.deliver != nil else { return false }
                    pump.reader = reader
                    pump.metrics = metrics
                    pump.started = true
                    return true
                }
                if attached {
                    schedulePump()
                    return
                }
            }
            // No delivery attached (or nothing more to read): read it here, at once.
            var step = first
            while case .chunk = step {
                step = reader.next()
                if case .chunk(let data) = step { handle(.bodyPart(ByteBuffer(bytes: data))) }
            }
            reader.close()
            detach()
            metrics.responseEnd = Date()
            metrics.responseBodyBytesReceived = reader.sent
            if case .failed(let error) = step {
                handle(.failed(error, metrics))
            } else {
                handle(.finished(metrics))
            }
        }
    }

    // MARK: - The pump (stored body files)

    private struct Pump {
        /// Queues an event for the task with its backpressure; nil once the exchange is done
        /// (it holds the task: dropping it breaks the cycle).
        var deliver: (@Sendable (EngineEvent) -> Void)?
        var reader: StoredBodyReader?
        var metrics = EngineMetrics()
        var started = false
        var running = false
        var readingPaused = false
        var suspended = false
        var cancelled = false
    }

    private let pump = Mutex(Pump())

    /// How the pump hands events to the task: through its callback queue, with the same
    /// backpressure as the engine's events. Call before the exchange starts.
    func attach(deliver: @escaping @Sendable (EngineEvent) -> Void) {
        pump.withLock { $0.deliver = deliver }
    }

    /// Drops the delivery (the exchange is over).
    private func detach() {
        pump.withLock { $0.deliver = nil }
    }

    /// The task's reading pause (backpressure), as for an engine task.
    func setReadingPaused(_ paused: Bool) {
        pump.withLock { $0.readingPaused = paused }
        if !paused { schedulePump() }
    }

    /// The task was suspended (true) or resumed.
    func setSuspended(_ suspended: Bool) {
        pump.withLock { $0.suspended = suspended }
        if !suspended { schedulePump() }
    }

    /// The task was cancelled: a stored body still being sent ends with `.failed(.cancelled)`.
    func cancel() {
        pump.withLock { $0.cancelled = true }
        schedulePump()
    }

    private func schedulePump() {
        let start = pump.withLock { pump -> Bool in
            guard pump.started, !pump.running, pump.deliver != nil else { return false }
            pump.running = true
            return true
        }
        if start { DispatchQueue.global().async { [self] in runPump() } }
    }

    /// Sends the stored body's chunks until it ends, the task pauses or it is cancelled. The
    /// file is read with no lock held (the reader is taken out while `running` keeps any other
    /// pump away): a pause, resume or cancel never waits for a disk read.
    private func runPump() {
        enum Step {
            case stop
            case read(StoredBodyReader)
            case send(EngineEvent, @Sendable (EngineEvent) -> Void, last: Bool)
        }
        while true {
            let decided = pump.withLock { pump -> Step in
                guard let deliver = pump.deliver, let reader = pump.reader else {
                    if pump.deliver == nil {  // the exchange is over: its file is not needed
                        pump.reader?.close()
                        pump.reader = nil
                    }
                    pump.running = false
                    return .stop
                }
                if pump.cancelled {
                    reader.close()
                    pump.reader = nil
                    pump.deliver = nil
                    pump.running = false
                    return .send(.failed(.cancelled, pump.metrics), deliver, last: true)
                }
                if pump.readingPaused || pump.suspended {
                    pump.running = false
                    return .stop
                }
                pump.reader = nil
                return .read(reader)
            }
            let step: Step
            if case .read(var reader) = decided {
                let next = reader.next()
                step = pump.withLock { pump -> Step in
                    guard let deliver = pump.deliver else {
                        reader.close()
                        pump.running = false
                        return .stop
                    }
                    if case .chunk(let data) = next {
                        pump.reader = reader
                        return .send(.bodyPart(ByteBuffer(bytes: data)), deliver, last: false)
                    }
                    reader.close()
                    pump.deliver = nil
                    pump.running = false
                    pump.metrics.responseEnd = Date()
                    pump.metrics.responseBodyBytesReceived = reader.sent
                    if case .failed(let error) = next {
                        return .send(.failed(error, pump.metrics), deliver, last: true)
                    }
                    return .send(.finished(pump.metrics), deliver, last: true)
                }
            } else {
                step = decided
            }
            guard case .send(let event, let deliver, let last) = step else { return }
            deliver(event)
            if last { return }
        }
    }

    // MARK: - Network responses

    /// `handle` wrapped so the cache sees (and may change) the events of a network exchange.
    func intercepting(_ handle: @escaping @Sendable (EngineEvent) -> Void) -> @Sendable (EngineEvent) -> Void {
        { [self] event in self.handle(event, forward: handle) }
    }

    private func handle(_ event: EngineEvent, forward: @escaping @Sendable (EngineEvent) -> Void) {
        switch event {
        case .responseHead(let head):
            forward(.responseHead(received(head)))
        case .bodyPart(let buffer):
            let (writer, replacing) = state.withLock { ($0.writer, $0.replacing != nil) }
            writer?.append(buffer)
            if !replacing { forward(event) }
        case .finished(let metrics):
            let (writer, replacing) = state.withLock { state in
                defer { state.writer = nil; state.replacing = nil }
                return (state.writer, state.replacing)
            }
            if let replacing {
                writer?.finish()
                var metrics = metrics
                metrics.revalidatedFromCache = true
                send(replacing.body, metrics: metrics, to: forward)
            } else if let writer {
                // The task ends once the entry is stored (its files written on the writer's
                // queue, not here): a request made after it finds the entry.
                writer.finish { [self] in
                    closeValidated()
                    detach()
                    forward(event)
                }
            } else {
                closeValidated()
                detach()
                forward(event)
            }
        case .failed:
            let writer = state.withLock { state in
                defer { state.writer = nil; state.replacing = nil }
                return state.writer
            }
            writer?.abandon()
            closeValidated()
            detach()
            forward(event)
        case .uploadProgress, .metricsUpdated:
            forward(event)
        }
    }

    /// Acts on a response head; returns the head the task sees.
    private func received(_ head: HTTPResponseHead) -> HTTPResponseHead {
        let status = Int(head.status.code)
        let responseTime = Date()
        switch mode {
        case .invalidate:
            for key in CacheInvalidation.keysToInvalidate(method: request.method, url: request.url, status: status, responseHeaders: head.headers) {
                cache.remove(key: key)
            }
            return head
        case .lookup(let validating):
            if status == 304, let validating, CacheValidation.notModifiedMatches(validating.entry, notModifiedHeaders: head.headers) {
                let merged = CacheValidation.merged(
                    validating.entry, notModifiedHeaders: head.headers, requestTime: requestTime, responseTime: responseTime)
                cache.refresh(merged)
                state.withLock { $0.replacing = Stored(entry: merged, body: validating.body) }
                return merged.responseHead
            }
            guard let key = CacheKey.key(for: request.url),
                CacheStorability.isStorable(method: request.method, requestHeaders: request.headers, status: status, responseHeaders: head.headers)
            else { return head }
            let entry = CacheEntry(
                key: key, status: status, reason: head.status.reasonPhrase,
                // (HTTPCache drops Set-Cookie: a replayed response would set again cookies since changed.)
                headerFields: head.headers.map { [$0.name, $0.value] },
                varied: CacheVary.secondaryKey(responseHeaders: head.headers, requestHeaders: request.headers),
                requestTime: requestTime, responseTime: responseTime, bodyLength: 0, bodyID: "")
            let writer = cache.makeWriter(for: entry)
            state.withLock { $0.writer = writer }
            return head
        }
    }

    /// Closes the stored body opened for validation when it is not used.
    private func closeValidated() {
        if case .lookup(let validating?) = mode { validating.close() }
    }
}

extension CachedExchange.Stored {
    /// Closes the body file, if the body is one.
    func close() {
        if case .file(let handle, _) = body { try? handle.close() }
    }
}
