import NIOCore
import Synchronization

/// The messages a socket received and not yet read, and how it ended: filled by the channel
/// handler on the event loop, drained by ``WebSocketConnection/receive()`` from any task.
///
/// Reading backs up into the connection: past ``highWater`` queued messages the handler stops
/// reading the socket (TCP flow control then slows the server), and below ``lowWater`` it
/// reads again. So a slow reader holds a bounded number of messages in memory.
final class WebSocketInbox: Sendable {
    /// How a socket ended: its close code and reason, and the error its reader gets (nil for
    /// a close that is not a failure: the stream of messages then just ends).
    struct Ending: Sendable, Equatable {
        var code: Int
        var reason: String
        var error: WebSocketError?
    }

    static let highWater = 64
    static let lowWater = 16

    private struct Waiter {
        let id: Int
        let continuation: CheckedContinuation<WebSocketMessage?, any Error>
    }

    private struct State {
        /// Unread messages, oldest first. A message read leaves it at once: a consumed message
        /// kept in the queue's storage held its whole payload (a 64 KiB echo kept up to 65 of
        /// them per socket alive, and peak memory grew with the messages sent).
        var messages = CircularBuffer<WebSocketMessage>(initialCapacity: 4)
        var waiters: [Waiter] = []
        var nextWaiter = 0
        var ending: Ending?
        var paused = false
    }

    private let state = Mutex(State())
    /// Asks the handler to read again (set once, before the first message).
    let resumeReading: @Sendable () -> Void

    init(resumeReading: @escaping @Sendable () -> Void) {
        self.resumeReading = resumeReading
    }

    /// How the socket ended, once it did.
    var ending: Ending? { state.withLock { $0.ending } }

    /// Hands `message` to a waiting reader or queues it. True: the queue is full, stop reading.
    func deliver(_ message: WebSocketMessage) -> Bool {
        let (waiter, pause): (Waiter?, Bool) = state.withLock { state in
            if !state.waiters.isEmpty { return (state.waiters.removeFirst(), false) }
            state.messages.append(message)
            if state.messages.count >= Self.highWater { state.paused = true }
            return (nil, state.paused)
        }
        waiter?.continuation.resume(returning: message)
        return pause
    }

    /// The socket ended: readers get the queued messages, then nil (or the ending's error).
    func end(_ ending: Ending) {
        let waiters: [Waiter] = state.withLock { state in
            guard state.ending == nil else { return [] }
            state.ending = ending
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters {
            if let error = ending.error { waiter.continuation.resume(throwing: error) } else { waiter.continuation.resume(returning: nil) }
        }
    }

    /// The next message; nil once the socket closed normally; throws the ending's error after
    /// a failure, or `CancellationError` when the calling task is cancelled while it waits.
    func next() async throws -> WebSocketMessage? {
        let (ready, id, resume): (Result<WebSocketMessage?, any Error>?, Int, Bool) = state.withLock { state in
            let (ready, resume) = Self.poll(&state)
            if ready == nil { state.nextWaiter += 1 }
            return (ready, state.nextWaiter, resume)
        }
        if resume { resumeReading() }
        if let ready { return try ready.get() }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let (ready, resume): (Result<WebSocketMessage?, any Error>?, Bool) = state.withLock { state in
                    if Task.isCancelled { return (.failure(CancellationError()), false) }
                    let (ready, resume) = Self.poll(&state)
                    if ready == nil { state.waiters.append(Waiter(id: id, continuation: continuation)) }
                    return (ready, resume)
                }
                if resume { resumeReading() }
                if let ready { continuation.resume(with: ready) }
            }
        } onCancel: {
            let waiter = state.withLock { state -> Waiter? in
                guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                return state.waiters.remove(at: index)
            }
            waiter?.continuation.resume(throwing: CancellationError())
        }
    }

    /// A queued message, else the ending (nil or its error), else nil: the caller waits.
    /// `resume`: the queue fell to the low-water mark while reading was paused.
    private static func poll(_ state: inout State) -> (Result<WebSocketMessage?, any Error>?, resume: Bool) {
        if let message = state.messages.popFirst() {
            var resume = false
            if state.paused, state.messages.count <= lowWater {
                state.paused = false
                resume = true
            }
            return (.success(message), resume)
        }
        if let ending = state.ending { return (ending.error.map { .failure($0) } ?? .success(nil), false) }
        return (nil, false)
    }
}
