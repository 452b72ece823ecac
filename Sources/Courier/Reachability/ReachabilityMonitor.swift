#if os(Linux)
import Foundation
import Glibc
import Synchronization

/// The process's one `NETLINK_ROUTE` listener, shared by every monitoring manager (one per
/// network namespace when a test watches its own).
///
/// A dedicated thread opens a socket subscribed to link, IPv4/IPv6 address and IPv6/IPv4 route
/// events and sleeps in `poll(2)` with no timeout on it and on a wake-up pipe: an idle monitor
/// costs no CPU. After a burst of events (read until the socket is empty, then until it has
/// been quiet for ``settleTime``, at most ``longestBurst``) it asks the kernel, on a second
/// socket, for the route to each watched target and the state of the link that route leaves
/// by, and hands each watch its snapshot (managers deliver only changes). The thread and its
/// sockets exist while at least one manager monitors; the last one to stop ends them.
final class ReachabilityMonitor: Sendable {
    /// How long the socket must stay quiet before a burst counts as over.
    static let settleTime: Duration = .milliseconds(10)
    /// The longest a burst of events holds back an evaluation.
    static let longestBurst: Duration = .milliseconds(100)

    /// The running monitors by namespace path (nil: the process's own namespace).
    private static let running = Mutex<[String?: ReachabilityMonitor]>([:])

    let networkNamespace: String?
    private let shared: Mutex<Shared>
    /// The wake-up pipe: read end polled by the thread, write end written under `shared`'s lock
    /// (so it is never written after the thread closed it).
    private let wakeRead: Int32
    private let wakeWrite: Int32

    private struct Shared {
        var watches: [ObjectIdentifier: ReachabilityWatch] = [:]
        /// Watches to evaluate without waiting for an event (new ones, fresh resolutions).
        var urgent: Set<ObjectIdentifier> = []
        var isStopping = false
        var isPipeClosed = false
    }

    /// What the thread failed at when it could not start (a namespace it could not enter, a
    /// socket it could not open) or had to stop watching (poll failed); its watches then keep
    /// their last status. For tests and diagnostics.
    static let lastStartFailure = Mutex<String?>(nil)

    /// How many monitor threads are running now (tests check that none is left behind).
    static let threadCount = Atomic<Int>(0)

    // MARK: - Registration

    /// Starts watching `target`: adds a watch to the namespace's monitor, starting the monitor
    /// when it is the first.
    static func observe(
        _ target: ReachabilityTarget, networkNamespace: String?,
        report: @escaping @Sendable (ReachabilitySnapshot) -> Void
    ) -> any ReachabilityObservation {
        let (watch, isNew) = running.withLock { monitors -> (ReachabilityWatch, Bool) in
            let existing = monitors[networkNamespace]
            let monitor = existing ?? ReachabilityMonitor(networkNamespace: networkNamespace)
            monitors[networkNamespace] = monitor
            let watch = ReachabilityWatch(target: target, monitor: monitor, report: report)
            monitor.shared.withLock { shared in
                shared.watches[ObjectIdentifier(watch)] = watch
                if case .domain = target {} else { shared.urgent.insert(ObjectIdentifier(watch)) }
            }
            return (watch, existing == nil)
        }
        if isNew { watch.monitor.start() }
        if case .domain = target { watch.resolve() } else { watch.monitor.wakeNow() }
        return watch
    }

    /// Removes `watch`; the last one stops the thread and closes the sockets.
    func remove(_ watch: ReachabilityWatch) {
        Self.running.withLock { monitors in
            shared.withLock { shared in
                shared.watches[ObjectIdentifier(watch)] = nil
                shared.urgent.remove(ObjectIdentifier(watch))
                if shared.watches.isEmpty {
                    shared.isStopping = true
                    if monitors[networkNamespace] === self { monitors[networkNamespace] = nil }
                }
                wake(shared)
            }
        }
    }

    /// Evaluates `watch` as soon as the thread is free (its name resolved anew).
    func evaluateSoon(_ watch: ReachabilityWatch) {
        shared.withLock { shared in
            guard shared.watches[ObjectIdentifier(watch)] != nil else { return }
            shared.urgent.insert(ObjectIdentifier(watch))
            wake(shared)
        }
    }

    /// Wakes the thread; call with the lock held.
    private func wake(_ shared: Shared) {
        guard !shared.isPipeClosed else { return }
        var byte: UInt8 = 1
        _ = write(wakeWrite, &byte, 1)  // a full pipe already wakes the thread
    }

    func wakeNow() {
        shared.withLock { wake($0) }
    }

    private init(networkNamespace: String?) {
        self.networkNamespace = networkNamespace
        var ends: [Int32] = [-1, -1]
        if pipe(&ends) == 0 {
            for end in ends {
                _ = fcntl(end, F_SETFD, FD_CLOEXEC)
                _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
            }
        }
        wakeRead = ends[0]
        wakeWrite = ends[1]
        shared = Mutex(Shared())
    }

    func start() {
        Self.threadCount.add(1, ordering: .relaxed)
        let thread = Thread { [self] in
            run()
            Self.threadCount.subtract(1, ordering: .relaxed)
        }
        thread.start()
    }

    // MARK: - The thread

    private func run() {
        defer { closePipe() }
        Self.nameThisThread("courier-reach")
        let events: RouteNetlinkSocket
        let queries: RouteNetlinkSocket
        do {
            if let networkNamespace { try NetworkNamespace.enter(networkNamespace) }
            events = try RouteNetlinkSocket(groups: RouteNetlink.reachabilityGroups, receiveBuffer: 1 << 20)
            queries = try RouteNetlinkSocket(groups: 0, receiveBuffer: 256 << 10)
        } catch {
            Self.lastStartFailure.withLock { $0 = String(describing: error) }
            waitUntilStopped()
            return
        }
        defer {
            events.close()
            queries.close()
        }
        queries.setReceiveTimeout(seconds: 2)
        var lookup = RouteLookup(socket: queries)
        let clock = ContinuousClock()
        var burst: (started: ContinuousClock.Instant, deadline: ContinuousClock.Instant)?

        while true {
            let timeout: Int32
            if let burst {
                let left = clock.now.duration(to: burst.deadline)
                let (seconds, attoseconds) = left.components
                timeout = left <= .zero ? 0 : Int32(clamping: seconds * 1000 + attoseconds / 1_000_000_000_000_000 + 1)
            } else {
                timeout = -1  // sleep until an event or a wake-up
            }
            var descriptors = [
                pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0),
                pollfd(fd: events.descriptor, events: Int16(POLLIN), revents: 0),
            ]
            let ready = poll(&descriptors, 2, timeout)
            if ready < 0 && errno != EINTR {
                Self.lastStartFailure.withLock { $0 = "poll failed: \(String(cString: strerror(errno)))" }
                waitUntilStopped()
                return
            }
            if descriptors[0].revents != 0 { drainPipe() }
            let (isStopping, urgent) = shared.withLock { shared -> (Bool, [ReachabilityWatch]) in
                defer { shared.urgent.removeAll() }
                return (shared.isStopping, shared.urgent.compactMap { shared.watches[$0] })
            }
            if isStopping { return }
            if descriptors[1].revents != 0, readEvents(events) {
                let now = clock.now
                let started = burst?.started ?? now
                burst = (started, min(now + Self.settleTime, started + Self.longestBurst))
            }
            if let current = burst, clock.now >= current.deadline {
                burst = nil
                let all = shared.withLock { Array($0.watches.values) }
                lookup.startPass()
                for watch in all {
                    evaluate(watch, with: &lookup)
                    watch.resolve()  // routes changed: a name may resolve elsewhere now
                }
            } else if !urgent.isEmpty {
                lookup.startPass()
                for watch in urgent { evaluate(watch, with: &lookup) }
            }
        }
    }

    /// Names the calling thread (what `ps -L`, `top -H` and the leak tests see). Glibc's Swift
    /// module has no `pthread_setname_np`; the kernel's own interface is this file.
    private static func nameThisThread(_ name: String) {
        let fd = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { return }
        var bytes = Array(name.utf8.prefix(15))
        _ = write(fd, &bytes, bytes.count)
        close(fd)
    }

    /// Reads every queued datagram; true when one of them was a link, address or route event
    /// (or events were lost, so everything must be read afresh).
    private func readEvents(_ socket: RouteNetlinkSocket) -> Bool {
        var relevant = false
        while true {
            let received: RouteNetlinkSocket.Received
            // An error other than a lost-events overrun (none is known to happen on netlink): read
            // the state afresh, as after an overrun, and wait for the next wake-up.
            do { received = try socket.receive(blocking: false) } catch { return true }
            switch received {
            case .wouldBlock: return relevant
            case .overrun: relevant = true
            case .datagram(let bytes):
                guard let messages = try? NetlinkCodec.messages(in: bytes) else {
                    relevant = true
                    continue
                }
                relevant = relevant || messages.contains { ReachabilityMonitor.isRelevant($0.type) }
            }
        }
    }

    static func isRelevant(_ type: UInt16) -> Bool {
        switch type {
        case RouteNetlink.newLink, RouteNetlink.deleteLink, RouteNetlink.newAddress, RouteNetlink.deleteAddress,
            RouteNetlink.newRoute, RouteNetlink.deleteRoute:
            return true
        default:
            return false
        }
    }

    private func evaluate(_ watch: ReachabilityWatch, with lookup: inout RouteLookup) {
        guard !watch.isCancelled else { return }
        if case .defaultRoute = watch.target {
            watch.deliver(lookup.defaultRouteSnapshot())
            return
        }
        guard let addresses = watch.addresses else { return }
        // The first reachable address wins (the resolver's order); later ones are not looked up.
        for address in addresses {
            let snapshot = lookup.snapshot(for: address)
            if snapshot.flags.contains(.reachable) {
                watch.deliver(snapshot)
                return
            }
        }
        watch.deliver(.notReachable)
    }

    /// After a failed start: sleeps until the last watch leaves.
    private func waitUntilStopped() {
        while !shared.withLock({ $0.isStopping }) {
            var descriptor = pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0)
            _ = poll(&descriptor, 1, -1)
            drainPipe()
        }
    }

    private func drainPipe() {
        var bytes = [UInt8](repeating: 0, count: 64)
        while read(wakeRead, &bytes, bytes.count) > 0 {}
    }

    private func closePipe() {
        shared.withLock { shared in
            shared.isPipeClosed = true
            close(wakeRead)
            close(wakeWrite)
        }
    }
}

/// Route and link lookups on the request socket, with the links read once per pass.
struct RouteLookup {
    let socket: RouteNetlinkSocket
    private var sequence: UInt32 = 0
    private var links: [Int32: LinkInfo?] = [:]

    init(socket: RouteNetlinkSocket) { self.socket = socket }

    /// Forgets the links read so far: a new pass reads them afresh.
    mutating func startPass() { links = [:] }

    /// The kernel's view of the path to `address`: a route lookup, then the link it leaves by.
    mutating func snapshot(for address: ReachabilityAddress) -> ReachabilitySnapshot {
        let replies = exchange(NetlinkCodec.routeRequest(to: address, sequence: nextSequence()))
        guard case .route(let route)? = replies.first else { return .notReachable }
        return snapshot(for: route)
    }

    /// The best usable default route: IPv4's, then IPv6's (each family's by metric, each
    /// multipath route's next hops in order).
    mutating func defaultRouteSnapshot() -> ReachabilitySnapshot {
        for family in [ReachabilityAddress.Family.ipv4, .ipv6] {
            let routes = exchange(NetlinkCodec.routeDumpRequest(family: family, sequence: nextSequence())).compactMap {
                reply -> RouteAnswer? in
                if case .route(let route) = reply { return route }
                return nil
            }
            for route in RouteReachability.defaultRoutes(in: routes) {
                for path in route.paths {
                    let found = snapshot(for: path)
                    if found.flags.contains(.reachable) { return found }
                }
            }
        }
        return .notReachable
    }

    private mutating func snapshot(for route: RouteAnswer) -> ReachabilitySnapshot {
        guard let index = route.outputInterface else { return .notReachable }
        return RouteReachability.snapshot(route: route, link: link(index))
    }

    /// The link with `index`, read once per pass.
    private mutating func link(_ index: Int32) -> LinkInfo? {
        if let known = links[index] { return known }
        let replies = exchange(NetlinkCodec.linkRequest(index: index, sequence: nextSequence()))
        var found: LinkInfo?
        if case .link(let read)? = replies.first { found = read }
        links[index] = .some(found)
        return found
    }

    private mutating func nextSequence() -> UInt32 {
        sequence &+= 1
        return sequence
    }

    /// Sends `bytes` and returns the replies carrying its sequence number: the one answer (or
    /// error) of a request, every entry of a dump up to its end. Empty on any failure.
    private func exchange(_ bytes: [UInt8]) -> [NetlinkReply] {
        var replies: [NetlinkReply] = []
        do {
            guard let request = try NetlinkCodec.messages(in: bytes).first else { return [] }
            let sequence = request.sequence
            let isDump = request.flags & RouteNetlink.flagDump != 0
            try socket.send(bytes)
            while true {
                guard case .datagram(let datagram) = try socket.receive(blocking: true) else { return [] }
                for message in try NetlinkCodec.messages(in: datagram) where message.sequence == sequence {
                    let reply = try NetlinkCodec.reply(message)
                    switch reply {
                    case .done: return replies
                    case .error: return isDump ? replies : [reply]
                    default:
                        replies.append(reply)
                        if !isDump { return replies }
                    }
                }
            }
        } catch {
            return []
        }
    }
}
#endif
