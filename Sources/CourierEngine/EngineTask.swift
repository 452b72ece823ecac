/// A handle on a request running in ``HTTPEngine``: cancel it, or pause and resume its transfer.
///
/// Thread-safe. Cancelling at any moment delivers ``EngineEvent/failed(_:_:)`` with
/// ``EngineError/cancelled`` (unless the request already ended) and releases the connection:
/// closed when the exchange was in flight, returned to the pool when it was clean.
public struct EngineTask: Sendable {
    let execution: RequestExecution
    let pool: ConnectionPool

    /// Cancels the request.
    public func cancel() {
        pool.abort(execution, with: .cancelled)
    }

    /// Stops reading the response from the socket (the server then stops sending once the
    /// buffers fill) and stops writing the request body.
    public func pause() {
        pool.setPaused(execution, reading: true, upload: true)
    }

    /// Undoes ``pause()``.
    public func resume() {
        pool.setPaused(execution, reading: false, upload: false)
    }

    /// Stops or restarts reading the response only (backpressure from a slow consumer).
    public func setReadingPaused(_ paused: Bool) {
        pool.setPaused(execution, reading: paused, upload: nil)
    }
}
