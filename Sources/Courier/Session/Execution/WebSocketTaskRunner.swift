import CourierEngine
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NIOCore
import NIOFoundationEssentialsCompat
import NIOHTTP1
import Synchronization

/// Runs a ``WebSocketTask``: the opening handshake through everything the session has (the
/// request's and configuration's headers, the cookie jar, the interceptor's `adapt`, the
/// engine's proxy and TLS settings with the session's trust verifier, one answer to a 401),
/// then the open socket, until it closes and the task completes.
///
/// A redirect during the handshake fails it, as in browsers. All state is behind one lock.
final class WebSocketTaskRunner: TaskDriver {
    private enum Phase {
        case created
        case opening
        case open(WebSocketConnection)
        /// The task completed; the socket it had, if it opened (its unread messages stay readable).
        case ended(WebSocketConnection?)
    }

    private struct State {
        var phase = Phase.created
        var openTask: Task<Void, Never>?
        /// Callers of send, receive and ping waiting for the handshake.
        var waiters: [CheckedContinuation<WebSocketConnection, any Error>] = []
        /// Why the task ended, once it did (for waiters that come later).
        var endError: CourierError?
        var maximumMessageSize = 1 << 20
        var closeCode = 0
        var closeReason: Data?
        /// A close asked for while the handshake ran: sent as soon as the socket opens.
        var cancelled = false
    }

    let task: WebSocketTask
    let environment: TaskEnvironment
    let progress = TaskProgress(uploadTotal: -1, uploadHandler: nil, downloadHandler: nil)
    let outbox = TaskNotificationOutbox()
    /// Logs, metrics and a client span for each handshake (nil without observability).
    private let observation: TaskObservation?
    private let state = Mutex(State())

    init(task: WebSocketTask, environment: TaskEnvironment) {
        self.task = task
        self.environment = environment
        self.observation = environment.observer.map { TaskObservation(observer: $0) }
    }

    private var url: URL? { task.originalRequest?.url }

    // MARK: - TaskDriver

    var hasStarted: Bool {
        state.withLock { if case .created = $0.phase { false } else { true } }
    }

    func resume() {
        let (starts, posts) = state.withLock { state -> (Bool, Bool) in
            guard case .created = state.phase else { return (false, false) }
            state.phase = .opening
            task.snapshot.withLock { $0.state = .running }
            return (true, environment.enqueue(.resume, of: task, on: outbox))
        }
        guard starts else { return }
        if posts { environment.post(.resume, of: task, through: outbox) }
        let opening = Task { await self.open() }
        state.withLock { $0.openTask = opening }
    }

    /// A WebSocket has no paused state: suspending it does nothing (URLSession's does not stop
    /// its socket either).
    func suspend() {}

    func cancel() {
        cancel(with: WebSocketCloseCode.goingAway.rawValue, reason: nil, asCancellation: true)
    }

    func cancel(producingResumeData handler: @escaping @Sendable (DownloadResumeData?) -> Void) {
        handler(nil)
        cancel()
    }

    // MARK: - The socket

    var maximumMessageSize: Int {
        get { state.withLock { $0.maximumMessageSize } }
        set { state.withLock { $0.maximumMessageSize = max(1, newValue) } }
    }

    var connection: WebSocketConnection? {
        state.withLock { if case .open(let connection) = $0.phase { connection } else { nil } }
    }

    var closeStatus: (code: Int, reason: Data?) {
        state.withLock { ($0.closeCode, $0.closeReason) }
    }

    func send(_ message: WebSocketTask.Message) async throws {
        let socket = try await openConnection()
        let engineMessage: WebSocketMessage
        switch message {
        case .string(let text): engineMessage = .text(text)
        case .data(let data): engineMessage = .binary(ByteBuffer(bytes: data))
        }
        do {
            try await socket.send(engineMessage)
        } catch {
            throw courierError(error)
        }
    }

    func receive() async throws -> WebSocketTask.Message {
        let socket = try await openConnection()
        let received: WebSocketMessage?
        do {
            received = try await socket.receive()
        } catch is CancellationError {
            cancel(with: WebSocketCloseCode.goingAway.rawValue, reason: nil, asCancellation: true)
            throw CourierError.cancelled(url: url)
        } catch {
            throw courierError(error)
        }
        switch received {
        case .text(let text): return .string(text)
        case .binary(let bytes): return .data(Self.data(bytes))
        case nil:
            let ending = await socket.ended()
            throw CourierError.webSocketFailed(url: url, error: .closed(code: ending.code, reason: ending.reason))
        }
    }

    func messages() -> AsyncThrowingStream<WebSocketTask.Message, any Error> {
        let (stream, continuation) = AsyncThrowingStream<WebSocketTask.Message, any Error>.makeStream()
        let reader = Task {
            while true {
                do {
                    let socket = try await openConnection()
                    guard let message = try await socket.receive() else {
                        continuation.finish()
                        return
                    }
                    switch message {
                    case .text(let text): continuation.yield(.string(text))
                    case .binary(let bytes): continuation.yield(.data(Self.data(bytes)))
                    }
                } catch is CancellationError {
                    continuation.finish(throwing: CourierError.cancelled(url: url))
                    return
                } catch {
                    continuation.finish(throwing: courierError(error))
                    return
                }
            }
        }
        continuation.onTermination = { [weak self] termination in
            reader.cancel()
            if case .cancelled = termination {
                self?.cancel(with: WebSocketCloseCode.goingAway.rawValue, reason: nil, asCancellation: true)
            }
        }
        return stream
    }

    func sendPing() async throws -> Duration {
        let socket = try await openConnection()
        do {
            return try await socket.ping()
        } catch {
            throw courierError(error)
        }
    }

    func cancel(with code: Int, reason: Data?, asCancellation: Bool = false) {
        let (phase, openTask): (Phase, Task<Void, Never>?) = state.withLock { state in
            if !state.cancelled, state.closeCode == 0 {
                state.closeCode = code
                state.closeReason = reason
            }
            if asCancellation { state.cancelled = true }
            return (state.phase, state.openTask)
        }
        switch phase {
        case .created:
            end(error: .cancelled(url: url), response: nil)
        case .opening:
            openTask?.cancel()
        case .open(let socket):
            let text = reason.map { String(decoding: $0, as: UTF8.self) } ?? ""
            Task { await socket.close(code: code, reason: text) }
        case .ended:
            break
        }
    }

    // MARK: - Opening

    /// The open socket; waits while the handshake runs.
    private func openConnection() async throws -> WebSocketConnection {
        try await withCheckedThrowingContinuation { continuation in
            let ready: Result<WebSocketConnection, any Error>? = state.withLock { state in
                switch state.phase {
                case .open(let socket): return .success(socket)
                case .opening:
                    state.waiters.append(continuation)
                    return nil
                case .created:
                    return .failure(CourierError.webSocketFailed(url: url, error: .closed(code: 0, reason: "the task was not resumed")))
                case .ended(let socket?):
                    // The task completed (its socket closed): what arrived before the close is
                    // still read, then the socket's end.
                    return .success(socket)
                case .ended(nil):
                    return .failure(state.endError ?? CourierError.webSocketFailed(
                        url: url, error: .closed(code: state.closeCode, reason: "")))
                }
            }
            if let ready { continuation.resume(with: ready) }
        }
    }

    private func open() async {
        guard var request = task.originalRequest else {
            end(error: .cancelled(url: url), response: nil)
            return
        }
        do {
            if let interceptor = environment.settings.withLock({ $0.interceptor }) {
                request = try await interceptor.adapt(request, for: task)
            }
            var answered401 = false
            while true {
                try Task.checkCancellation()
                let opening = try await handshake(request)
                switch opening {
                case .opened(let socket):
                    opened(socket)
                    return
                case .refused(let head, let body, let metrics):
                    task.snapshot.withLock { $0.metrics = metrics }
                    let httpURL = try Self.httpURL(for: request)
                    environment.storeCookies(from: head.headers, for: request, url: httpURL)
                    let response = SessionBridge.makeResponse(head, url: request.url ?? httpURL)
                    if head.status == .unauthorized, !answered401, let retry = authenticated(request, head: head, response: response) {
                        answered401 = true
                        request = retry
                        continue
                    }
                    end(error: refusal(head, body: body, response: response), response: response)
                    return
                }
            }
        } catch {
            end(error: courierError(error), response: nil)
        }
    }

    private func handshake(_ request: URLRequest) async throws -> WebSocketOpening {
        var http = request
        http.url = try Self.httpURL(for: request)
        var engineRequest = try SessionBridge.engineRequest(for: http, body: nil, environment: environment)
        // The handshake is an exchange as a request's is: its span ends with the `101` (or the refusal).
        let report = observation?.exchangeStarting(&engineRequest, url: request.url) { _ in }
        let configuration = environment.configuration.webSocket
        var options = WebSocketOptions()
        options.maximumMessageSize = maximumMessageSize
        options.pingInterval = configuration.pingInterval
        options.pongTimeout = configuration.pongTimeout
        options.closeTimeout = configuration.closeTimeout
        options.perMessageDeflate = configuration.perMessageDeflate
        options.allowsHTTP2 = configuration.allowsHTTP2
        options.protocols = (request.value(forHTTPHeaderField: "Sec-WebSocket-Protocol") ?? "")
            .split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        do {
            let opening = try await environment.engine.openWebSocket(engineRequest, options: options)
            switch opening {
            case .opened(let socket):
                report?(.responseHead(socket.responseHead))
                report?(.finished(socket.metrics))
            case .refused(let head, _, let metrics):
                report?(.responseHead(head))
                report?(.finished(metrics))
            }
            return opening
        } catch {
            report?(.failed(error as? EngineError ?? .protocolViolation("\(error)"), EngineMetrics()))
            throw error
        }
    }

    private func opened(_ socket: WebSocketConnection) {
        let url = self.url
        var sent = task.originalRequest ?? URLRequest(url: url ?? URL(fileURLWithPath: "/"))
        for field in socket.requestHead.headers where sent.value(forHTTPHeaderField: field.name) == nil {
            sent.setValue(field.value, forHTTPHeaderField: field.name)
        }
        task.snapshot.withLock { snapshot in
            if let url { snapshot.setResponse(head: socket.responseHead, url: url, made: nil) }
            snapshot.metrics = socket.metrics
            snapshot.currentRequest = sent
        }
        if let request = task.originalRequest, let httpURL = try? Self.httpURL(for: request) {
            environment.storeCookies(from: socket.responseHead.headers, for: request, url: httpURL)
        }
        let (waiters, pendingClose): ([CheckedContinuation<WebSocketConnection, any Error>], (Int, Data?)?) = state.withLock { state in
            state.phase = .open(socket)
            defer { state.waiters = [] }
            return (state.waiters, state.cancelled ? (state.closeCode, state.closeReason) : nil)
        }
        waiters.forEach { $0.resume(returning: socket) }
        if let (code, reason) = pendingClose {
            Task { await socket.close(code: code, reason: reason.map { String(decoding: $0, as: UTF8.self) } ?? "") }
        }
        Task {
            let ending = await socket.ended()
            let cancelled = state.withLock { state -> Bool in
                if state.closeCode == 0 || !state.cancelled {
                    state.closeCode = ending.code
                    state.closeReason = ending.reason.isEmpty ? nil : Data(ending.reason.utf8)
                }
                return state.cancelled
            }
            let error: CourierError? =
                cancelled ? .cancelled(url: url) : ending.error.map { .webSocketFailed(url: url, error: $0) }
            end(error: error, response: task.response)
        }
    }

    /// Ends the task once: its state, the waiters, the task list, the completion report.
    private func end(error: CourierError?, response: HTTPURLResponse?) {
        let waiters: [CheckedContinuation<WebSocketConnection, any Error>]? = state.withLock { state in
            if case .ended = state.phase { return nil }
            if case .open(let socket) = state.phase { state.phase = .ended(socket) } else { state.phase = .ended(nil) }
            state.endError = error
            defer { state.waiters = [] }
            return state.waiters
        }
        guard let waiters else { return }
        let failure = error ?? CourierError.webSocketFailed(url: url, error: .closed(code: closeStatus.code, reason: ""))
        waiters.forEach { $0.resume(throwing: failure) }
        progress.finish()
        task.snapshot.withLock { snapshot in
            snapshot.state = .completed
            snapshot.error = error
        }
        observation?.taskFinished(method: "GET", url: url, response: response, error: error, retries: 0)
        environment.registry.unregister(task)
        environment.taskCompleted(
            task, response: response, data: nil, object: nil, error: error, serializer: nil, assetURL: nil, outbox: outbox)
    }

    // MARK: - Helpers

    /// The error a refused handshake ends with: a redirect is never followed.
    private func refusal(_ head: HTTPResponseHead, body: ByteBuffer, response: HTTPURLResponse?) -> CourierError {
        let code = Int(head.status.code)
        if (300..<400).contains(code), let location = head.headers.first(name: "location") {
            return .webSocketHandshakeFailed(
                response: response, reason: "the server redirected the handshake (\(code)) to \(location); a WebSocket follows no redirect")
        }
        let expected = head.version.major == 2 ? "200 (an HTTP/2 WebSocket stream)" : "101 Switching Protocols"
        return .webSocketHandshakeFailed(
            response: response, reason: "the server answered \(code) \(head.status.reasonPhrase), not \(expected)")
    }

    /// `request` answering the 401's strongest challenge with the challenge block's credential
    /// or the session credential (same origin as the task's request, allowed schemes); nil
    /// when there is none.
    private func authenticated(_ request: URLRequest, head: HTTPResponseHead, response: HTTPURLResponse?) -> URLRequest? {
        let challenges = AuthenticationHeader.challenges(in: head.headers["www-authenticate"])
        guard let offered = ChallengeSelection.strongest(challenges) else { return nil }
        var chosen: AuthenticationHeader.Challenge? = ChallengeSelection.strongest(challenges, allowed: environment.credentialSchemes)
        var credential = environment.credential
        if let hook = environment.hooks.taskDidReceiveChallenge, let response {
            let challenge = AuthenticationChallenge(
                scheme: offered.scheme, realm: offered.parameters["realm"], parameters: offered.parameters, previousFailureCount: 0,
                failureResponse: response)
            switch hook(task, challenge) {
            case .useCredential(let given):
                (credential, chosen) = (given, offered)
            case .performDefaultHandling:
                break
            case .rejectProtectionSpace, .cancel:
                return nil
            }
        }
        guard let credential, let chosen, let user = credential.user, let password = credential.password else { return nil }
        let authorization: String?
        if chosen.scheme.lowercased() == "digest" {
            guard let origin = CredentialScope.Origin(request.url), let realm = chosen.parameters["realm"],
                let nonce = chosen.parameters["nonce"],
                let count = environment.digestAuthenticator.nextCount(origin: origin, realm: realm, nonce: nonce)
            else { return nil }
            authorization = AuthenticationHeader.digest(
                chosen, user: user, password: password, method: "GET", uri: AuthenticationHeader.requestTarget(of: request.url),
                nonceCount: count, clientNonce: AuthenticationHeader.makeClientNonce())
        } else {
            authorization = AuthenticationHeader.basic(user: user, password: password)
        }
        guard let authorization else { return nil }
        var retry = request
        retry.setValue(authorization, forHTTPHeaderField: "Authorization")
        return retry
    }

    /// A received binary message as `Data`, without copying it: the `Data` keeps the message's
    /// buffer alive (the engine already copied a small message out of a larger read, so it holds
    /// only its own bytes).
    private static func data(_ bytes: ByteBuffer) -> Data {
        Data(buffer: bytes, byteTransferStrategy: .noCopy)
    }

    private func courierError(_ error: any Error) -> CourierError {
        switch error {
        case let error as CourierError: return error
        case let error as EngineError: return CourierError(error, url: url)
        case WebSocketError.handshakeFailed(let reason): return .webSocketHandshakeFailed(response: task.response, reason: reason)
        case let error as WebSocketError: return .webSocketFailed(url: url, error: error)
        case is CancellationError: return .cancelled(url: url)
        default: return .connectionLost(url: url, reason: "\(error)")
        }
    }

    /// The request's URL with `ws` as `http` and `wss` as `https` (what cookies, proxies and the
    /// engine see).
    static func httpURL(for request: URLRequest) throws -> URL {
        guard let url = request.url, var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else {
            throw CourierError.requestSerializationFailed(.invalidURL(request.url?.absoluteString ?? ""))
        }
        switch components.scheme?.lowercased() {
        case "ws": components.scheme = "http"
        case "wss": components.scheme = "https"
        case "http", "https": break
        default:
            throw CourierError.webSocketHandshakeFailed(
                response: nil, reason: "a WebSocket URL's scheme is ws, wss, http or https, not \(components.scheme ?? "none")")
        }
        guard let mapped = components.url else { throw CourierError.requestSerializationFailed(.invalidURL(url.absoluteString)) }
        return mapped
    }
}
