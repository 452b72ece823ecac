/// One HTTP/2 stream's send window as RFC 9113 §6.9 keeps it: it starts at the peer's
/// `SETTINGS_INITIAL_WINDOW_SIZE` (and moves with it), shrinks by the DATA sent and grows by
/// each `WINDOW_UPDATE`. A window past 2³¹−1 is a `FLOW_CONTROL_ERROR` (§6.9.1).
///
/// A plain value: the stream's handler feeds it and acts on the answer.
struct HTTP2SendWindow: Equatable {
    /// The initial window when the peer's SETTINGS don't set one (RFC 9113 §6.5.2).
    static let defaultInitialSize = 65_535
    /// The largest window allowed: 2³¹−1.
    static let maximumSize = Int(Int32.max)

    /// What a `WINDOW_UPDATE` did.
    enum Update: Equatable {
        /// The window is now `size`.
        case accepted(size: Int)
        /// The window would be `size`, past 2³¹−1: reset the stream with `FLOW_CONTROL_ERROR`.
        case overflow(size: Int)
    }

    /// Flow-controlled bytes sent on the stream.
    private(set) var sent = 0
    /// The sum of the stream's `WINDOW_UPDATE` increments.
    private(set) var granted = 0

    /// The window given the peer's current initial window size (a SETTINGS change moves every
    /// stream's window by the difference, which this reproduces).
    func size(initialWindowSize: Int) -> Int {
        initialWindowSize + granted - sent
    }

    /// `bytes` of DATA (payload and padding) went out.
    mutating func sent(_ bytes: Int) {
        sent += bytes
    }

    /// A `WINDOW_UPDATE` of `increment` arrived; the peer's initial window is `initialWindowSize`.
    mutating func receiveWindowUpdate(increment: Int, initialWindowSize: Int) -> Update {
        let size = self.size(initialWindowSize: initialWindowSize) + increment
        guard size <= Self.maximumSize else { return .overflow(size: size) }
        granted += increment
        return .accepted(size: size)
    }
}
