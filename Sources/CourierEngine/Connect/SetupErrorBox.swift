import Synchronization

/// Carries a connection's setup error (TLS rejection, handshake failure) from its event loop
/// to the task that is opening it, even after the handler has left the pipeline.
final class SetupErrorBox: Sendable {
    private let error = Mutex<EngineError?>(nil)

    func set(_ value: EngineError?) { error.withLock { $0 = value } }
    var value: EngineError? { error.withLock { $0 } }
}
