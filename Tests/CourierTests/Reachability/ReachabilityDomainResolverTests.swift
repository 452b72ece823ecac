@testable import Courier
import Dispatch
import Foundation
import Synchronization
import Testing

/// DomainResolver against a lookup the test holds (a name server that doesn't answer): each
/// resolution gives up at its bound, and the lookups it starts don't pile up.
@Suite struct ReachabilityDomainResolverTests {
    /// A lookup that blocks until released, counting its calls.
    final class HeldLookup: Sendable {
        private let gate = DispatchSemaphore(value: 0)
        private let state = Mutex((calls: 0, released: false))
        var calls: Int { state.withLock { $0.calls } }

        func lookup(_ name: String) -> [ReachabilityAddress] {
            state.withLock { $0.calls += 1 }
            _ = gate.wait(timeout: .now() + 120)  // a hang bound, for a test that fails
            return [ReachabilityAddress(literal: "192.0.2.7")].compactMap { $0 }
        }

        func release() {
            let first = state.withLock { state in
                defer { state.released = true }
                return !state.released
            }
            if first { for _ in 0..<64 { gate.signal() } }
        }
    }

    /// Routes change while the name server hangs: the watch asks again at each change, and each
    /// ask gives up at its bound while getaddrinfo still holds its thread. Each ask started
    /// another getaddrinfo, one more blocked Dispatch thread per ask (the global pool has a
    /// limit, and the cache's pump and others use it). Now an ask for a name whose lookup is
    /// still running waits for that one.
    @Test func asksForANameWhoseLookupHangsShareOneLookup() async throws {
        let held = HeldLookup()
        defer { held.release() }
        let name = "held-\(UUID().uuidString).invalid"
        let answers = Mutex<[[ReachabilityAddress]]>([])
        for _ in 0..<5 {
            DomainResolver.resolve(name, bound: .milliseconds(50), lookup: held.lookup) { addresses in
                answers.withLock { $0.append(addresses) }
            }
        }
        try await eventually { answers.withLock { $0.count } == 5 }  // each gave up at its bound
        let given = answers.withLock { $0 }
        #expect(given.allSatisfy { $0.isEmpty })
        try await eventually { held.calls >= 1 }
        #expect(held.calls == 1, "one blocked lookup per ask")
        // Once it answers, the next ask starts a lookup of its own again.
        held.release()
        let late = Mutex<[ReachabilityAddress]?>(nil)
        DomainResolver.resolve(name, bound: .seconds(60), lookup: held.lookup) { addresses in late.withLock { $0 = addresses } }
        try await eventually { late.withLock { $0 } != nil }
        let answered = late.withLock { $0 }
        #expect(answered?.map { $0.description } == ["192.0.2.7"])
    }
}
