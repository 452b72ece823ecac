/// AFAutoPurgingImageCache's purge rule as a value, free of locks and clocks.
///
/// After an add leaves `usage > capacity`, entries go oldest access first, each removed whole,
/// until the bytes removed reach `usage - preferredUsageAfterPurge` (AFN stops at the first
/// entry that reaches it, so usage may end below the preferred figure).
struct ImageCachePurgeRule: Sendable, Equatable {
    /// One cached entry as the rule sees it.
    struct Entry: Sendable, Equatable {
        var identifier: String
        var cost: UInt64
        /// A logical access stamp: larger is more recent.
        var lastAccess: UInt64
    }

    var capacity: UInt64
    var preferredUsageAfterPurge: UInt64

    /// The identifiers to remove (oldest first) and the bytes they free; empty when usage is
    /// within capacity.
    func victims(of entries: some Sequence<Entry>, usage: UInt64) -> (identifiers: [String], bytes: UInt64) {
        guard usage > capacity else { return ([], 0) }
        let target = usage - min(usage, preferredUsageAfterPurge)
        var purged: UInt64 = 0
        var identifiers: [String] = []
        for entry in entries.sorted(by: { $0.lastAccess < $1.lastAccess }) {
            identifiers.append(entry.identifier)
            purged = Self.adding(purged, entry.cost)
            if purged >= target { break }
        }
        return (identifiers, purged)
    }

    /// AFN's cost: pixel width × pixel height × 4 bytes (saturating: a header may claim a size
    /// no memory holds, which then simply fills the cache).
    static func cost(pixelWidth: Int, pixelHeight: Int) -> UInt64 {
        let width = UInt64(max(pixelWidth, 0))
        let height = UInt64(max(pixelHeight, 0))
        let (pixels, overflow) = width.multipliedReportingOverflow(by: height)
        if overflow { return .max }
        let (bytes, overflow4) = pixels.multipliedReportingOverflow(by: 4)
        return overflow4 ? .max : bytes
    }

    /// `a + b`, or `UInt64.max` when that overflows.
    static func adding(_ a: UInt64, _ b: UInt64) -> UInt64 {
        let (sum, overflow) = a.addingReportingOverflow(b)
        return overflow ? .max : sum
    }
}
