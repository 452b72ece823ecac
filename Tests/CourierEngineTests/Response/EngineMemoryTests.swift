import CourierEngine
import CourierTestServer
import Foundation
import Synchronization
import Testing

/// A caller that keeps its task and is referenced from its own event closure: the usual shape
/// of an adapter. The engine must drop the closure after the terminal event, or every request
/// leaks the pair.
private final class SelfReferencingCaller: Sendable {
    let task = Mutex<EngineTask?>(nil)
    let ended = Mutex(false)

    func handle(_ event: EngineEvent) {
        if event.isTerminal { ended.withLock { $0 = true } }
    }
}

@Suite("HTTPEngine memory")
struct EngineMemoryTests {
    @Test func eventClosureIsReleasedAfterTheTerminalEvent() async throws {
        try await withEngine { engine, server in
            weak var weakCaller: SelfReferencingCaller?
            do {
                let caller = SelfReferencingCaller()
                weakCaller = caller
                let task = engine.execute(EngineRequest(url: server.url("/get"))) { caller.handle($0) }
                caller.task.withLock { $0 = task }
                #expect(await eventually { caller.ended.withLock { $0 } })
            }
            #expect(await eventually { weakCaller == nil })
        }
    }
}
