import Foundation
import Synchronization

/// A task's upload and download progress: the totals, the Foundation `Progress` objects (made
/// on first use: most tasks never ask, and `Progress` is costly enough to show in
/// small-request throughput), the progress blocks and the `AsyncStream` listeners. One lock
/// for all of it; the blocks run outside it, on the task's callback queue (see
/// ``TaskCallbackQueue``), so they are called one at a time and in order.
final class TaskProgress: Sendable {
    typealias Direction = TransferProgress.Direction
    typealias Handler = @Sendable (Progress) -> Void

    private struct Side {
        var total: Int64 = -1
        var completed: Int64 = 0
        var object: Progress?
        var listeners: [AsyncStream<TransferProgress>.Continuation] = []
    }

    private struct State {
        var upload = Side()
        var download = Side()
        /// Set when the task completed: streams asked for later end at once.
        var finished = false

        subscript(direction: Direction) -> Side {
            get { direction == .upload ? upload : download }
            set { if direction == .upload { upload = newValue } else { download = newValue } }
        }
    }

    private let state: Mutex<State>
    private let uploadHandler: Handler?
    private let downloadHandler: Handler?

    /// `uploadTotal`: the body's size when known up front (else -1).
    init(uploadTotal: Int64, uploadHandler: Handler?, downloadHandler: Handler?) {
        var initial = State()
        initial.upload.total = uploadTotal
        state = Mutex(initial)
        self.uploadHandler = uploadHandler
        self.downloadHandler = downloadHandler
    }

    /// The current total for `direction` (-1 when unknown).
    func total(_ direction: Direction) -> Int64 { state.withLock { $0[direction].total } }

    /// The `Progress` object for `direction`, made on first use from the current counts.
    func object(_ direction: Direction) -> Progress {
        state.withLock { state in
            if let existing = state[direction].object { return existing }
            let progress = Progress(totalUnitCount: state[direction].total)
            progress.completedUnitCount = state[direction].completed
            state[direction].object = progress
            return progress
        }
    }

    /// Records `completed` and a new `total` (upload: only the first known one), updates the
    /// progress object and the streams, then calls the progress block when `notify`.
    func update(_ direction: Direction, total: Int64?, completed: Int64, notify: Bool = true) {
        let (object, listeners, current) = state.withLock { state -> (Progress?, [AsyncStream<TransferProgress>.Continuation], Int64) in
            if let total, direction == .download || state.upload.total < 0 { state[direction].total = total }
            state[direction].completed = completed
            let side = state[direction]
            let handler = direction == .upload ? uploadHandler : downloadHandler
            var object = side.object
            if object == nil, handler != nil {
                let made = Progress(totalUnitCount: side.total)
                state[direction].object = made
                object = made
            }
            return (object, side.listeners, side.total)
        }
        if !listeners.isEmpty {
            let value = TransferProgress(direction: direction, completedUnitCount: completed, totalUnitCount: current)
            for continuation in listeners { continuation.yield(value) }
        }
        guard let object else { return }
        if object.totalUnitCount != current { object.totalUnitCount = current }
        object.completedUnitCount = completed
        if notify, let handler = direction == .upload ? uploadHandler : downloadHandler { handler(object) }
    }

    /// `direction`'s progress as a stream: the current value, then every update, until
    /// ``finish()`` (the newest value is kept when the consumer is slower than the transfer).
    func updates(_ direction: Direction) -> AsyncStream<TransferProgress> {
        let (stream, continuation) = AsyncStream<TransferProgress>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let (current, finished) = state.withLock { state in
            if !state.finished { state[direction].listeners.append(continuation) }
            let side = state[direction]
            return (TransferProgress(direction: direction, completedUnitCount: side.completed, totalUnitCount: side.total), state.finished)
        }
        continuation.yield(current)
        if finished { continuation.finish() }
        return stream
    }

    /// Ends every stream; later ones end at once.
    func finish() {
        let listeners = state.withLock { state in
            defer {
                state.finished = true
                state.upload.listeners = []
                state.download.listeners = []
            }
            return state.upload.listeners + state.download.listeners
        }
        for continuation in listeners { continuation.finish() }
    }
}
