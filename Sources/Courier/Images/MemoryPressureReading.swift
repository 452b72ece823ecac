/// What Linux says about memory pressure, parsed from its text files, and the rule that turns
/// successive readings into "purge now" (pure: no files, no clocks).
///
/// - cgroup v2 `memory.events`: `low N`, `high N`, `max N`, `oom N`, `oom_kill N` counters. A rise
///   in `high`, `max`, `oom` or `oom_kill` since the last reading means the kernel had to reclaim
///   or refuse memory for this cgroup.
/// - PSI (`memory.pressure` in the cgroup, or `/proc/pressure/memory`): `some avg10=… avg60=…
///   avg300=… total=…` and `full …`. `some avg10` is the share of the last 10 s in which some task
///   stalled on memory.
struct MemoryPressureReading: Sendable, Equatable {
    /// `high + max + oom + oom_kill` from `memory.events`, nil when not available.
    var eventCount: UInt64?
    /// PSI `some avg10` (percent), nil when not available.
    var someAverage10: Double?

    /// Sums the pressure counters of a `memory.events` file; nil when none is present.
    static func eventCount(fromMemoryEvents text: String) -> UInt64? {
        var total: UInt64 = 0
        var found = false
        for line in text.split(whereSeparator: \.isNewline) {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count == 2, ["high", "max", "oom", "oom_kill"].contains(fields[0]),
                let value = UInt64(fields[1])
            else { continue }
            total = ImageCachePurgeRule.adding(total, value)
            found = true
        }
        return found ? total : nil
    }

    /// The `some avg10` figure of a PSI file; nil when absent or malformed.
    static func someAverage10(fromPressure text: String) -> Double? {
        for line in text.split(whereSeparator: \.isNewline) {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.first == "some" else { continue }
            for field in fields.dropFirst() where field.hasPrefix("avg10=") {
                guard let value = Double(field.dropFirst("avg10=".count)), value.isFinite, value >= 0 else { return nil }
                return value
            }
        }
        return nil
    }

    /// The cgroup v2 path of this process from `/proc/self/cgroup` (its `0::/path` line), or nil
    /// on a cgroup v1-only system.
    static func cgroupPath(fromProcSelfCgroup text: String) -> String? {
        for line in text.split(whereSeparator: \.isNewline) where line.hasPrefix("0::") {
            let path = String(line.dropFirst(3))
            guard path.hasPrefix("/"), !path.split(separator: "/").contains("..") else { return nil }
            return path
        }
        return nil
    }
}

/// Turns successive readings into pressure events: a rise in the cgroup's event counters, or PSI
/// `some avg10` crossing ``stallThreshold`` from below (so a long stall purges once, not at
/// every poll).
struct MemoryPressureDetector: Sendable, Equatable {
    /// PSI `some avg10`, in percent, at or above which memory counts as under pressure.
    var stallThreshold: Double = 20
    /// The last value seen of each figure (a failed read leaves it unchanged, so a file caught
    /// mid-rewrite does not reset the baseline).
    private var last = MemoryPressureReading(eventCount: nil, someAverage10: nil)

    init(stallThreshold: Double = 20) { self.stallThreshold = stallThreshold }

    /// True when `reading` shows new pressure compared with the previous reading (the first
    /// reading only sets the baseline for the counters, but a stall already above the threshold
    /// counts).
    mutating func observe(_ reading: MemoryPressureReading) -> Bool {
        var pressure = false
        if let now = reading.eventCount {
            if let before = last.eventCount, now > before { pressure = true }
            last.eventCount = now
        }
        if let stall = reading.someAverage10 {
            let wasAbove = last.someAverage10.map { $0 >= stallThreshold } ?? false
            if stall >= stallThreshold, !wasAbove { pressure = true }
            last.someAverage10 = stall
        }
        return pressure
    }
}
