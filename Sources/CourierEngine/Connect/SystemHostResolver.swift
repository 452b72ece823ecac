#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import NIOCore
import NIOPosix
import Synchronization

/// The system's resolver: `getaddrinfo`, on threads of the engine's own, in the order it
/// answers (RFC 6724). What ``EngineConfiguration/hostResolver`` is by default; a custom
/// ``HostResolver`` may hand names it does not know to it.
///
/// The engine times the lookup separately (the metrics' `domainLookupStart`/`End`), counts it
/// against the connect timeout, and asks once for a name many requests wait for at the same
/// time; NIO's Happy Eyeballs connector (RFC 8305) then races the addresses through
/// `PreResolvedAddresses`.
public struct SystemHostResolver: HostResolver {
    /// The system resolver.
    public init() {}

    /// The addresses `getaddrinfo` gives for `host` (TCP), each once, in its order.
    /// - Throws: ``EngineError/dnsFailure(host:reason:)`` with the resolver's reason.
    public func addresses(of host: String, port: Int) async throws -> [String] {
        let loop = MultiThreadedEventLoopGroup.singleton.any()
        return try await Self.resolve(host: host, port: port, deadline: .distantFuture, on: loop).compactMap(\.ipAddress)
    }

    /// Where lookups block. Not NIO's shared pool: file bodies are read there, and a name server
    /// that doesn't answer holds a thread per lookup until `getaddrinfo` gives up (tens of
    /// seconds), which stalled every file upload in the process. Eight threads, started on first
    /// use and kept for the process's life; lookups beyond that wait their turn (each request
    /// still ends at its connect deadline, and a lookup whose request ended while it waited is
    /// never made).
    static let threadPool: NIOThreadPool = {
        let pool = NIOThreadPool(numberOfThreads: 8)
        pool.start()
        return pool
    }()

    /// A blocking lookup (`getaddrinfo`, or a stand-in in tests).
    typealias Lookup = @Sendable (_ host: String, _ port: Int) -> Result<[SocketAddress], EngineError>

    /// The addresses of `host`, looked up on ``threadPool``, by `deadline` (the connect
    /// timeout covers the lookup too: a resolver that doesn't answer ends the request with
    /// ``EngineError/timedOut(_:)`` `.connect` then, not when `getaddrinfo` gives up, which
    /// may be much later). A lookup still running then finishes on its thread, unheard.
    /// - Parameter loop: where the deadline's timer runs.
    static func resolve(
        host: String, port: Int, deadline: NIODeadline, on loop: any EventLoop, lookup: @escaping Lookup = resolveBlocking
    ) async throws(EngineError) -> [SocketAddress] {
        if let literal = try? SocketAddress(ipAddress: host, port: port) {
            return [literal]
        }
        guard NIODeadline.now() < deadline else { throw .timedOut(.connect) }
        let promise = loop.makePromise(of: [SocketAddress].self)
        // The first of the answer and the deadline settles the promise.
        let waiter = Waiter { result in promise.completeWith(result.mapError { $0 as any Error }) }
        let timer = loop.scheduleTask(deadline: deadline) { waiter.settle(.failure(.timedOut(.connect))) }
        let question = Question(host: host, port: port)
        let asksFirst = inFlight.withLock { lookups in
            guard lookups[question] == nil else {
                // Requests that gave up (their deadline passed) leave with the next one that
                // comes: a lookup that hangs doesn't collect a waiter per retry.
                lookups[question]?.removeAll { $0.isSettled }
                lookups[question]?.append(waiter)
                return false
            }
            lookups[question] = [waiter]
            return true
        }
        if asksFirst {
            threadPool.submit { state in
                guard case .active = state else {
                    answer(question, .failure(.dnsFailure(host: host, reason: "the resolver is not running")))
                    return
                }
                // Every request waiting for it ended while it waited for a thread: not made.
                let wanted = inFlight.withLock { lookups in
                    guard let waiters = lookups[question], waiters.contains(where: { !$0.isSettled }) else {
                        lookups[question] = nil
                        return false
                    }
                    return true
                }
                guard wanted else { return }
                answer(question, lookup(host, port))
            }
        }
        defer { timer.cancel() }
        do {
            return try await promise.futureResult.get()
        } catch let error as EngineError {
            throw error
        } catch {
            throw .dnsFailure(host: host, reason: "\(error)")
        }
    }

    /// A name and port being looked up.
    private struct Question: Hashable {
        let host: String
        let port: Int
    }

    /// The lookups in flight and the requests waiting for each: a request for a name already
    /// being looked up waits for that answer instead of taking another thread (a fan-out to one
    /// host whose name server is slow would otherwise fill the pool with the same question).
    /// The first request's `lookup` answers them all. Waiters whose request gave up are
    /// removed as new ones come, and the whole list with the answer.
    private static let inFlight = Mutex<[Question: [Waiter]]>([:])

    /// How many requests wait for the lookup of `host` and `port` (for tests).
    static func waiterCount(host: String, port: Int) -> Int {
        inFlight.withLock { $0[Question(host: host, port: port)]?.count ?? 0 }
    }

    /// Ends the lookup of `question`: every request still waiting gets `result`.
    private static func answer(_ question: Question, _ result: Result<[SocketAddress], EngineError>) {
        let waiters = inFlight.withLock { $0.removeValue(forKey: question) } ?? []
        for waiter in waiters { waiter.settle(result) }
    }

    /// One request waiting for a lookup: settled once, by the answer or by its deadline.
    private final class Waiter: Sendable {
        private let taken = Atomic(false)
        private let complete: @Sendable (Result<[SocketAddress], EngineError>) -> Void

        init(_ complete: @escaping @Sendable (Result<[SocketAddress], EngineError>) -> Void) {
            self.complete = complete
        }

        /// Whether it was settled already (its request has ended).
        var isSettled: Bool { taken.load(ordering: .acquiring) }

        /// Settles it with `result` unless it was settled before.
        func settle(_ result: Result<[SocketAddress], EngineError>) {
            guard !taken.exchange(true, ordering: .acquiringAndReleasing) else { return }
            complete(result)
        }
    }

    /// `getaddrinfo` for TCP: each address once, in the order it gives (RFC 6724). Blocks.
    static func resolveBlocking(host: String, port: Int) -> Result<[SocketAddress], EngineError> {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        #if canImport(Darwin)
        hints.ai_socktype = SOCK_STREAM
        #else
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        #endif
        hints.ai_protocol = Int32(IPPROTO_TCP)
        var info: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &info)
        guard status == 0, let first = info else {
            let reason = String(cString: gai_strerror(status))
            return .failure(.dnsFailure(host: host, reason: reason))
        }
        defer { freeaddrinfo(first) }
        var addresses: [SocketAddress] = []
        var cursor: UnsafeMutablePointer<addrinfo>? = first
        while let entry = cursor {
            if let address = entry.pointee.ai_addr {
                switch entry.pointee.ai_family {
                case AF_INET:
                    let v4 = address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee }
                    addresses.append(SocketAddress(v4, host: host))
                case AF_INET6:
                    let v6 = address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { $0.pointee }
                    addresses.append(SocketAddress(v6, host: host))
                default:
                    break
                }
            }
            cursor = entry.pointee.ai_next
        }
        // getaddrinfo lists one entry per socket type on some systems; keep the first of each.
        var seen = Set<String>()
        addresses = addresses.filter { seen.insert($0.description).inserted }
        if addresses.isEmpty {
            return .failure(.dnsFailure(host: host, reason: "no IPv4 or IPv6 address"))
        }
        return .success(addresses)
    }
}

/// Hands NIO's Happy Eyeballs connector (`ClientBootstrap.connect(host:port:)`) addresses
/// already resolved (by the configured ``HostResolver`` or an override): IPv6 as the AAAA answer, IPv4 as the A answer, each
/// in getaddrinfo's (RFC 6724) order. The connector then staggers the attempts (IPv6 first,
/// 250 ms apart) within one connect timeout, as RFC 8305 describes, instead of trying each
/// address in turn with the whole timeout.
struct PreResolvedAddresses: Resolver, Sendable {
    let addresses: [SocketAddress]
    let eventLoop: any EventLoop

    func initiateAQuery(host: String, port: Int) -> EventLoopFuture<[SocketAddress]> {
        eventLoop.makeSucceededFuture(addresses.filter { $0.protocol == .inet })
    }

    func initiateAAAAQuery(host: String, port: Int) -> EventLoopFuture<[SocketAddress]> {
        eventLoop.makeSucceededFuture(addresses.filter { $0.protocol == .inet6 })
    }

    func cancelQueries() {}
}
