public import NIOCore
public import NIOPosix
import Synchronization

/// Courier's HTTP client engine: a connection pool over SwiftNIO with TLS verification
/// hooks, timeouts, backpressure and per-request metrics. Speaks HTTP/1.1 and HTTP/2: over
/// TLS it offers `h2` (ALPN) and multiplexes requests as streams on one connection per origin
/// when the server picks it (``EngineConfiguration/httpVersion``).
///
/// One engine owns one pool; share it. Requests run concurrently; each reports its events to
/// the closure given to ``execute(_:onEvent:)`` (on the connection's event loop, in order,
/// ending with exactly one terminal event). ``collect(_:maximumBodySize:)`` and
/// ``stream(_:)`` are the `async` shapes of the same thing.
///
/// ```swift
/// let engine = try HTTPEngine()
/// let response = try await engine.collect(EngineRequest(url: URL(string: "http://127.0.0.1:8080/get")!))
/// print(response.head.status, response.body.readableBytes)
/// await engine.shutdown()
/// ```
public final class HTTPEngine: Sendable {
    /// The configuration the engine was created with.
    public let configuration: EngineConfiguration
    let pool: ConnectionPool
    private let group: any EventLoopGroup
    /// Opens WebSocket connections (HTTP/1.1 only, plain http tunnelled through HTTP proxies);
    /// made on first use, so an engine that opens none loads its TLS settings once.
    private let webSocketFactoryBox = Mutex<ConnectionFactory?>(nil)

    /// Runs Swift tasks on one of the engine's event loops, where the connections they open
    /// live too: requests awaited from such a task never change threads
    /// (`withTaskExecutorPreference(engine.taskExecutor) { … }`, or
    /// `Task(executorPreference: engine.taskExecutor)`). See ``EngineTaskExecutor``.
    public let taskExecutor: EngineTaskExecutor

    /// Creates an engine. Throws ``EngineError/tlsHandshakeFailed(_:)`` when the TLS settings
    /// can't be loaded (a bad trust root or client key).
    ///
    /// An `eventLoopGroup` you pass must outlive the engine: `await shutdown()` the engine
    /// before shutting the group down. SwiftNIO drops work scheduled on a group that has shut
    /// down, so a request still running then may never end (over HTTP/2 especially: its next
    /// stream start or connection attempt is such work); `shutdown()` itself still returns.
    public init(
        configuration: EngineConfiguration = .init(),
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
    ) throws(EngineError) {
        self.configuration = configuration
        self.group = eventLoopGroup
        self.taskExecutor = EngineTaskExecutor(eventLoop: eventLoopGroup.next())
        let factory = try ConnectionFactory(configuration: configuration, group: eventLoopGroup)
        self.pool = ConnectionPool(configuration: configuration, factory: factory)
    }

    /// Starts `request`. `onEvent` receives its events in order on an event loop; keep it fast
    /// (hand heavy work elsewhere). Invalid input (URL, scheme, headers, a missing body file)
    /// fails before any I/O, still through `onEvent`. `request` is taken (`consuming`): a
    /// caller that passes its last use moves it in, without copying its URL, fields and body
    /// (each copy is a retain of the caller's objects, often shared by every request).
    @discardableResult
    public func execute(_ request: consuming EngineRequest, onEvent: @escaping @Sendable (EngineEvent) -> Void) -> EngineTask {
        let waiterID = pool.makeWaiterID()
        let idleTimeout = request.idleTimeout ?? configuration.idleTimeout
        let target: RequestTarget
        let proxy: EngineProxy?
        let bodyFile: FileChunkReader.Identity?
        do {
            target = configuration.routed(try RequestTarget(url: request.url))
            proxy = try configuration.proxy(for: target)
            bodyFile = try Self.validate(request)
        } catch {
            let execution = RequestExecution(
                request: consume request,
                target: Self.fallbackTarget,
                waiterID: waiterID,
                idleTimeout: idleTimeout,
                onEvent: onEvent
            )
            group.any().execute { execution.finish(.failure(error), metrics: nil) }
            return EngineTask(execution: execution, pool: pool)
        }
        let execution = RequestExecution(
            request: consume request,
            target: target,
            waiterID: waiterID,
            idleTimeout: idleTimeout,
            proxy: proxy,
            bodyFile: bodyFile,
            onEvent: onEvent
        )
        pool.submit(execution)
        return EngineTask(execution: execution, pool: pool)
    }

    /// The factory WebSocket connections are opened with (made on first use).
    func webSocketFactory() throws(EngineError) -> ConnectionFactory {
        try webSocketFactoryBox.withLock { box throws(EngineError) -> ConnectionFactory in
            if let factory = box { return factory }
            var http1Only = configuration
            http1Only.httpVersion = .http1Only
            var factory = try ConnectionFactory(configuration: http1Only, group: group)
            factory.tunnelsPlainHTTP = true
            box = factory
            return factory
        }
    }

    /// Closes every connection and fails queued and running requests with
    /// ``EngineError/shutDown``. Returns when all connections are closed.
    public func shutdown() async {
        await pool.shutdown()
    }

    /// Connections currently open (idle or busy).
    public var openConnectionCount: Int { pool.openConnectionCount }

    /// Stands in for the target of a request that failed validation (it never reaches I/O).
    private static let fallbackTarget: RequestTarget = {
        do {
            return try RequestTarget(string: "http://invalid/")
        } catch {
            preconditionFailure("a constant URL failed to parse: \(error)")
        }
    }()

    /// Checks `request` before any I/O; for a file body, opens the file (then closes it: a
    /// request waiting for a connection holds no descriptor) and returns which file it is.
    static func validate(_ request: EngineRequest) throws(EngineError) -> FileChunkReader.Identity? {
        guard !request.method.isEmpty, request.method.utf8.allSatisfy(HeaderValidation.isTokenByte) else {
            throw .invalidHeader(name: ":method", reason: "'\(request.method)' is not a valid HTTP method")
        }
        try HeaderValidation.validate(request.headers)
        guard let body = request.body else { return nil }
        if case .stream(let length?, _) = body.storage, length < 0 {
            // It would be the head's Content-Length: "-5" is no length a server can frame by.
            throw .invalidBody("a stream body's declared length is negative (\(length))")
        }
        guard case .file(let path, let offset, let length) = body.storage else { return nil }
        if offset < 0 || (length ?? 0) < 0 {
            throw .invalidBody("negative offset or length for \(path)")
        }
        let identity = try FileChunkReader(path: path).identity
        // Refused before the head: an offset past the end would send an empty body that looks
        // like success, a range past the end a head whose length the body can't fill.
        if offset > identity.size {
            throw .invalidBody("the offset \(offset) is past the end of \(path) (\(identity.size) bytes)")
        }
        if let length, length > identity.size - offset {
            throw .invalidBody("\(length) bytes from offset \(offset) run past the end of \(path) (\(identity.size) bytes)")
        }
        return identity
    }
}
