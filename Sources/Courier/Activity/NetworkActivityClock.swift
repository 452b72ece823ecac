public import Dispatch

/// The time source of ``NetworkActivityIndicatorManager``: a monotonic "now" and one-shot
/// wake-ups. The default is ``DispatchNetworkActivityClock``; tests inject one they advance by
/// hand, so the activation and completion delays are checked without waiting.
public protocol NetworkActivityClock: Sendable {
    /// Seconds on a monotonic scale (only differences matter).
    var now: Double { get }
    /// Calls `action` once, at or after `deadline` on the scale of ``now``.
    func schedule(at deadline: Double, _ action: @escaping @Sendable () -> Void)
}

/// ``NetworkActivityClock`` on `DispatchTime` (uptime) and a dispatch queue.
public struct DispatchNetworkActivityClock: NetworkActivityClock {
    private let queue: DispatchQueue

    /// Wake-ups run on `queue` (default: a serial queue of its own).
    public init(queue: DispatchQueue = DispatchQueue(label: "courier.network-activity.clock")) {
        self.queue = queue
    }

    /// Seconds since boot (`DispatchTime.now()`).
    public var now: Double { Double(DispatchTime.now().uptimeNanoseconds) / 1_000_000_000 }

    /// Runs `action` on the queue once `deadline` is reached.
    public func schedule(at deadline: Double, _ action: @escaping @Sendable () -> Void) {
        let remaining = deadline - now
        let delay = remaining.isFinite ? max(0, min(remaining, 86_400)) : 0
        queue.asyncAfter(deadline: .now() + .nanoseconds(Int(delay * 1_000_000_000)), execute: action)
    }
}
