@testable import Courier
import Foundation
import Testing

/// Per-request costs the session layer keeps off the request path.
@Suite("Session hot path")
struct SessionHotPathTests {
    /// The engine (TLS context with the system trust store, connection pool) is made with the
    /// manager, not by the first request. (A TLS configuration that doesn't load still fails
    /// the first task: EngineConfigurationFailureTests.)
    @Test func theEngineIsMadeWithTheManager() {
        let manager = URLSessionManager()
        #expect(manager.environment.registry.withLock { $0.engine } != nil)
        manager.invalidateSessionCancelingTasks(true, resetSession: false)
    }
}
