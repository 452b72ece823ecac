@testable import CourierEngine
import Dispatch
import NIOCore
import NIOPosix
import Synchronization
import Testing

/// The connect timeout covers the name lookup: a resolver that doesn't answer (a dead name
/// server makes `getaddrinfo` wait for its own retries, tens of seconds) ends the request at
/// the deadline with the connect timeout's error. The lookup is `getaddrinfo`'s stand-in
/// here: a test can't make the system's resolver hang on demand.
@Suite("SystemHostResolver deadline", .serialized)
struct SystemHostResolverTests {
    /// A lookup held until the test lets it go, answering `127.0.0.1` then.
    private final class HeldLookup: Sendable {
        let release = DispatchSemaphore(value: 0)
        /// How many lookups have started (each then holds a resolver thread until released).
        let started = Atomic(0)
        let returned = Atomic(false)
        var lookup: SystemHostResolver.Lookup {
            { [self] _, port in
                started.add(1, ordering: .sequentiallyConsistent)
                release.wait()
                defer { returned.store(true, ordering: .sequentiallyConsistent) }
                return Result { try SocketAddress(ipAddress: "127.0.0.1", port: port) }
                    .map { [$0] }.mapError { _ in EngineError.dnsFailure(host: "held", reason: "bad test address") }
            }
        }
    }

    private let loop = MultiThreadedEventLoopGroup.singleton.next()

    @Test func aLookupThatDoesNotAnswerByTheDeadlineEndsInTheConnectTimeout() async throws {
        let held = HeldLookup()
        var caught: EngineError?
        do {
            _ = try await SystemHostResolver.resolve(
                host: "slow.invalid", port: 80, deadline: .now() + .milliseconds(200), on: loop, lookup: held.lookup)
        } catch {
            caught = error
        }
        #expect(caught == .timedOut(.connect))
        let lookupReturned = held.returned.load(ordering: .sequentiallyConsistent)
        #expect(!lookupReturned, "the request ended while the lookup still ran")
        // The late answer is let go and dropped. (This can't tell a dropped answer from a second
        // completion: NIO ignores that silently. What the test shows is the request ending at
        // the deadline while the lookup still ran, and nothing failing when the lookup ends.)
        held.release.signal()
        while !held.returned.load(ordering: .sequentiallyConsistent) { try await Task.sleep(for: .milliseconds(5)) }
        try await Task.sleep(for: .milliseconds(20))
    }

    @Test func aLookupAnsweringInTimeGivesItsAddresses() async throws {
        let held = HeldLookup()
        held.release.signal()
        let addresses = try await SystemHostResolver.resolve(
            host: "quick.invalid", port: 8080, deadline: .now() + .seconds(30), on: loop, lookup: held.lookup)
        #expect(addresses.map(\.port) == [8080])
        #expect(addresses.first?.ipAddress == "127.0.0.1")
    }

    @Test func aDeadlineAlreadyPassedDoesNotStartALookup() async throws {
        final class Calls: Sendable { let count = Atomic(0) }
        let calls = Calls()
        var caught: EngineError?
        do {
            _ = try await SystemHostResolver.resolve(host: "late.invalid", port: 80, deadline: .now() - .milliseconds(1), on: loop) { _, _ in
                calls.count.add(1, ordering: .relaxed)
                return .failure(.dnsFailure(host: "late.invalid", reason: "not expected"))
            }
        } catch {
            caught = error
        }
        #expect(caught == .timedOut(.connect))
        let made = calls.count.load(ordering: .relaxed)
        #expect(made == 0)
    }

    /// Requests for a name already being looked up wait for that lookup's answer: one thread,
    /// one `getaddrinfo`, every request answered (a fan-out to one slow host no longer fills
    /// the resolver's threads with the same question). One whose deadline passes meanwhile
    /// still ends then, alone.
    @Test func concurrentLookupsOfOneNameShareOneLookup() async throws {
        final class Calls: Sendable { let count = Atomic(0) }
        let calls = Calls()
        let held = HeldLookup()
        let lookup: SystemHostResolver.Lookup = { host, port in
            calls.count.add(1, ordering: .relaxed)
            return held.lookup(host, port)
        }
        let waiting = (0..<5).map { _ in
            Task { try await SystemHostResolver.resolve(host: "shared.invalid", port: 8080, deadline: .now() + .seconds(30), on: loop, lookup: lookup) }
        }
        var impatient: EngineError?
        do {
            _ = try await SystemHostResolver.resolve(host: "shared.invalid", port: 8080, deadline: .now() + .milliseconds(200), on: loop, lookup: lookup)
        } catch {
            impatient = error
        }
        #expect(impatient == .timedOut(.connect))
        held.release.signal()
        for request in waiting {
            let addresses = try await request.value
            #expect(addresses.first?.ipAddress == "127.0.0.1")
            #expect(addresses.first?.port == 8080)
        }
        #expect(calls.count.load(ordering: .relaxed) == 1)
        // Another port is another question.
        held.release.signal()
        _ = try await SystemHostResolver.resolve(host: "shared.invalid", port: 8081, deadline: .now() + .seconds(30), on: loop, lookup: lookup)
        #expect(calls.count.load(ordering: .relaxed) == 2)
    }

    /// Requests that gave up on a lookup that doesn't answer are not kept until it does: a
    /// client retrying a host whose name server hangs (each try ending at its connect deadline)
    /// would otherwise park one waiter per try, with its promise, for as long as `getaddrinfo`
    /// takes (tens of seconds), and memory would grow with the retry rate.
    @Test func requestsThatGaveUpOnALookupAreNotKeptUntilItAnswers() async throws {
        let held = HeldLookup()
        let patient = Task {
            try await SystemHostResolver.resolve(host: "pile.invalid", port: 80, deadline: .now() + .seconds(30), on: loop, lookup: held.lookup)
        }
        #expect(await eventually { held.started.load(ordering: .sequentiallyConsistent) == 1 })
        for _ in 0..<100 {
            do {
                _ = try await SystemHostResolver.resolve(
                    host: "pile.invalid", port: 80, deadline: .now() + .milliseconds(1), on: loop, lookup: held.lookup)
                Issue.record("a request past its deadline got an answer")
            } catch {
                #expect(error == .timedOut(.connect))
            }
        }
        // The patient request, and at most the last one to give up (removed when the next comes).
        #expect(SystemHostResolver.waiterCount(host: "pile.invalid", port: 80) <= 2)
        held.release.signal()
        let addresses = try await patient.value
        #expect(addresses.first?.ipAddress == "127.0.0.1")
        #expect(SystemHostResolver.waiterCount(host: "pile.invalid", port: 80) == 0)
    }

    /// A lookup still waiting for a thread when its request's deadline passed is never made:
    /// behind lookups that don't answer, those of requests already given up would otherwise
    /// each take a thread in turn and prolong the stall for everyone after them.
    @Test func aQueuedLookupWhoseDeadlinePassedIsNeverMade() async throws {
        let held = HeldLookup()
        let filling = (0..<8).map { index in
            Task {
                try? await SystemHostResolver.resolve(
                    host: "filling-\(index).invalid", port: 80, deadline: .now() + .seconds(5), on: loop, lookup: held.lookup)
            }
        }
        final class Calls: Sendable { let count = Atomic(0) }
        let calls = Calls()
        // The eight are on the pool's threads: the next lookup waits in its queue.
        #expect(await eventually { held.started.load(ordering: .sequentiallyConsistent) == 8 })
        var caught: EngineError?
        do {
            _ = try await SystemHostResolver.resolve(host: "queued.invalid", port: 80, deadline: .now() + .milliseconds(100), on: loop) { _, _ in
                calls.count.add(1, ordering: .relaxed)
                return .failure(.dnsFailure(host: "queued.invalid", reason: "not expected"))
            }
        } catch {
            caught = error
        }
        #expect(caught == .timedOut(.connect))
        for _ in 0..<8 { held.release.signal() }
        for lookup in filling { _ = await lookup.value }
        // The queue drained: a job submitted now runs after the queued lookup's job started.
        final class Flag: Sendable { let set = Atomic(false) }
        let drained = Flag()
        SystemHostResolver.threadPool.submit { _ in drained.set.store(true, ordering: .sequentiallyConsistent) }
        for _ in 0..<500 where !drained.set.load(ordering: .sequentiallyConsistent) { try await Task.sleep(for: .milliseconds(10)) }
        try await Task.sleep(for: .milliseconds(100))
        let made = calls.count.load(ordering: .relaxed)
        #expect(made == 0, "the lookup of a request that had ended was made")
    }

    /// Lookups that don't answer hold threads of the resolver's own, not NIO's shared pool, where
    /// file bodies are read: with as many lookups held as that pool has threads (and more), work
    /// on the shared pool still runs. (They used to share it: a dead name server stalled every
    /// file upload in the process until `getaddrinfo` gave up.)
    @Test func heldLookupsLeaveNIOsSharedThreadPoolFree() async throws {
        let held = HeldLookup()
        let count = NIOThreadPool.singleton.numberOfThreads + 1
        let lookups = (0..<count).map { index in
            Task {
                try? await SystemHostResolver.resolve(
                    host: "held-\(index).invalid", port: 80, deadline: .now() + .milliseconds(300), on: loop, lookup: held.lookup)
            }
        }
        for lookup in lookups { _ = await lookup.value }  // each ended at its deadline, its lookup still held
        final class Flag: Sendable { let set = Atomic(false) }
        let flag = Flag()
        NIOThreadPool.singleton.submit { _ in flag.set.store(true, ordering: .sequentiallyConsistent) }
        for _ in 0..<200 where !flag.set.load(ordering: .sequentiallyConsistent) {
            try await Task.sleep(for: .milliseconds(10))
        }
        let sharedPoolRan = flag.set.load(ordering: .sequentiallyConsistent)
        #expect(sharedPoolRan, "NIO's shared thread pool is stuck behind name lookups")
        for _ in 0..<count { held.release.signal() }
    }
}
