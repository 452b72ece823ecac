public import Dispatch
import Foundation
import Synchronization

/// Watches whether a host, an address or the network at large can be reached, and says so when
/// it changes: AFNetworking's `AFNetworkReachabilityManager`.
///
/// On Linux the kernel tells: one process-wide `NETLINK_ROUTE` socket, shared by every
/// monitoring manager, receives link, address and route events; after each burst of events the
/// kernel is asked for the route to each target and the state of the link it leaves by. Nothing
/// polls: an idle monitor uses no CPU. On Apple platforms the manager is a thin layer over
/// `SCNetworkReachability`.
///
/// A change is delivered three ways, each exactly once, in this order on ``callbackQueue``: the
/// status-change block (``setReachabilityStatusChangeBlock(_:)``), then the
/// ``Foundation/NSNotification/Name/reachabilityDidChange`` notification; every ``statusUpdates``
/// stream gets it at the same moment. ``status``, ``flags`` and ``interfaceName`` are updated on
/// ``callbackQueue`` just before the block runs, so the block reads them consistently.
///
/// As in AFNetworking, reachability says whether a path exists now, not whether a request will
/// succeed: don't use it to refuse to try a request.
public final class NetworkReachabilityManager: Sendable {
    /// The manager for the default route ("the network at large"), like AFN's `+sharedManager`.
    public static let shared = NetworkReachabilityManager()

    let target: ReachabilityTarget
    /// The network namespace (a path such as `/run/netns/NAME`) to watch instead of the
    /// process's own: a hook for tests, which change links in a namespace of their own.
    let networkNamespace: String?
    private let state: Mutex<State>

    private struct State {
        var generation: UInt64 = 0
        var isMonitoring = false
        var observation: (any ReachabilityObservation)?
        /// The latest evaluation of the current generation (nil before the first).
        var evaluated: ReachabilitySnapshot?
        /// What the last delivery published (nil until the first after `startMonitoring()`).
        var published: ReachabilitySnapshot?
        var block: (@Sendable (Status) -> Void)?
        var callbackQueue: DispatchQueue
        var streams: [UInt64: AsyncStream<Status>.Continuation] = [:]
        var nextStreamID: UInt64 = 0
    }

    /// A new manager for the default route: reachable when general traffic has a path out (on
    /// Linux, the route the kernel would use for an address only a default route covers).
    public convenience init() {
        self.init(target: .defaultRoute)
    }

    /// A manager for a host name (AFN's `+managerForDomain:`), or nil for an empty or malformed
    /// name. The name is resolved when monitoring starts and again whenever routes change (off
    /// the caller's thread, given up after 10 s); the host is reachable when any of its addresses
    /// is. `localhost` is reachable when the loopback interface is up.
    public convenience init?(domain: String) {
        guard ReachabilityTarget.isValidHostName(domain) else { return nil }
        self.init(target: .domain(domain))
    }

    /// A manager for one IPv4 or IPv6 address literal (AFN's `+managerForAddress:`), such as
    /// `"10.0.0.1"` or `"::1"` (brackets allowed).
    /// - Throws: ``CourierError/invalidReachabilityAddress(_:)`` for anything that is not an
    ///   IP address literal (host names: use ``init(domain:)``).
    public convenience init(address: String) throws {
        guard let parsed = ReachabilityAddress(literal: address) else {
            throw CourierError.invalidReachabilityAddress(address)
        }
        self.init(target: .address(parsed))
    }

    init(target: ReachabilityTarget, networkNamespace: String? = nil) {
        self.target = target
        self.networkNamespace = networkNamespace
        #if canImport(SystemConfiguration)
        let queue = DispatchQueue.main
        #else
        let queue = DispatchQueue(label: "courier.reachability.callbacks")
        #endif
        state = Mutex(State(callbackQueue: queue))
    }

    deinit {
        let (observation, streams) = state.withLock { state in
            (state.observation, Array(state.streams.values))
        }
        observation?.cancel()
        for stream in streams { stream.finish() }
    }

    // MARK: - Status

    /// The last status delivered: ``Status/unknown`` until the first evaluation after
    /// ``startMonitoring()``. Kept after ``stopMonitoring()``.
    public var status: Status { state.withLock { $0.published?.status ?? .unknown } }

    /// The flags the last delivered evaluation found; nil before the first.
    public var flags: ReachabilityFlags? { state.withLock { $0.published?.flags } }

    /// The interface the path to the target leaves by (`"eth0"`, `"lo"`), nil when not reachable
    /// or not known (Apple platforms don't say).
    public var interfaceName: String? { state.withLock { $0.published?.interfaceName } }

    /// Reachable by any interface: ``isReachableViaWWAN`` or ``isReachableViaWiFi``.
    public var isReachable: Bool { isReachableViaWWAN || isReachableViaWiFi }

    /// The status is ``Status/reachableViaWWAN``.
    public var isReachableViaWWAN: Bool { status == .reachableViaWWAN }

    /// The status is ``Status/reachableViaWiFi`` (every non-cellular path, as in AFNetworking).
    public var isReachableViaWiFi: Bool { status == .reachableViaWiFi }

    // MARK: - Monitoring

    /// Starts watching (stopping first if already running): the target is evaluated now, and
    /// again after every relevant kernel event; the first evaluation is delivered as a change
    /// from ``Status/unknown``.
    public func startMonitoring() {
        stopMonitoring()
        let generation = state.withLock { state -> UInt64 in
            state.generation += 1
            state.isMonitoring = true
            state.evaluated = nil
            state.published = nil
            return state.generation
        }
        let observation = ReachabilityEngine.observe(target, networkNamespace: networkNamespace) {
            [weak self] snapshot in
            self?.receive(snapshot, generation: generation)
        }
        let stale = state.withLock { state -> Bool in
            guard state.isMonitoring, state.generation == generation else { return true }
            state.observation = observation
            return false
        }
        if stale { observation.cancel() }
    }

    /// Stops watching. Nothing is delivered after it returns, even a change already queued on
    /// ``callbackQueue``; the last status stays readable.
    public func stopMonitoring() {
        let observation = state.withLock { state -> (any ReachabilityObservation)? in
            state.generation += 1
            state.isMonitoring = false
            state.evaluated = nil
            defer { state.observation = nil }
            return state.observation
        }
        observation?.cancel()
    }

    // MARK: - Delivery

    /// Sets the block called on ``callbackQueue`` with the new status after each change (nil
    /// removes it). AFN's `-setReachabilityStatusChangeBlock:`.
    public func setReachabilityStatusChangeBlock(_ block: (@Sendable (Status) -> Void)?) {
        state.withLock { $0.block = block }
    }

    /// Where the status-change block runs and the notification is posted: the main queue on
    /// Apple platforms (as AFNetworking), a serial queue of the manager's own elsewhere. Set it
    /// before ``startMonitoring()``; a serial queue keeps deliveries in order.
    public var callbackQueue: DispatchQueue {
        get { state.withLock { $0.callbackQueue } }
        set { state.withLock { $0.callbackQueue = newValue } }
    }

    /// The status, once known, then each change, for as long as the manager lives (the stream
    /// finishes when the manager is released). Each access makes a new stream; a stopped
    /// manager's streams stay open and get the changes after the next ``startMonitoring()``.
    public var statusUpdates: AsyncStream<Status> {
        let (stream, continuation) = AsyncStream<Status>.makeStream()
        let id = state.withLock { state -> UInt64 in
            let id = state.nextStreamID
            state.nextStreamID += 1
            state.streams[id] = continuation
            if let published = state.published, published.status != .unknown {
                continuation.yield(published.status)
            }
            return id
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.streams.removeValue(forKey: id) }
        }
        return stream
    }

    /// An evaluation from the engine: queued for delivery when it differs from the last one.
    private func receive(_ snapshot: ReachabilitySnapshot, generation: UInt64) {
        let queue = state.withLock { state -> DispatchQueue? in
            guard state.isMonitoring, state.generation == generation, state.evaluated != snapshot else { return nil }
            state.evaluated = snapshot
            return state.callbackQueue
        }
        queue?.async { [weak self] in self?.publish(snapshot, generation: generation) }
    }

    private struct Delivery {
        let block: (@Sendable (Status) -> Void)?
    }

    /// On the callback queue: publishes `snapshot` and, when the status changed, delivers it.
    private func publish(_ snapshot: ReachabilitySnapshot, generation: UInt64) {
        let delivery = state.withLock { state -> Delivery? in
            guard state.isMonitoring, state.generation == generation else { return nil }
            let previous = state.published?.status ?? .unknown
            state.published = snapshot
            guard snapshot.status != previous else { return nil }
            for stream in state.streams.values { stream.yield(snapshot.status) }
            return Delivery(block: state.block)
        }
        guard let delivery else { return }
        let status = snapshot.status
        delivery.block?(status)
        NotificationCenter.default.post(
            name: .reachabilityDidChange, object: self, userInfo: [Self.statusUserInfoKey: status])
    }
}

/// A running watch of one target; cancelling it stops reports (idempotent).
protocol ReachabilityObservation: Sendable {
    func cancel()
}
