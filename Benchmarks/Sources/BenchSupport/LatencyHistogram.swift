/// Request latencies in a fixed-size log-linear histogram (HdrHistogram's layout): exact below
/// 64 ns, then 64 buckets per power of two, so any recorded value is known within 1/64
/// (1.6 %). Its memory does not grow with the number of requests, so it does not show in the
/// peak RSS it is measured beside.
public struct LatencyHistogram: Sendable {
    /// Sub-buckets per power of two (and the exact range below it).
    static let subBuckets = 64
    static let subBucketBits = 6
    /// Powers of two covered above 64 ns: up to 2^46 ns (19.5 hours).
    static let octaves = 41

    private var counts: [Int]
    /// Values recorded.
    public private(set) var count = 0
    /// The largest value recorded, ns.
    public private(set) var maximum: Int64 = 0

    public init() {
        counts = Array(repeating: 0, count: Self.subBuckets * (Self.octaves + 1))
    }

    /// Records one latency of `nanoseconds` (negative values count as 0; values past the
    /// range go into the last bucket).
    public mutating func record(nanoseconds: Int64) {
        let value = max(0, nanoseconds)
        counts[Self.index(of: value)] += 1
        count += 1
        if value > maximum { maximum = value }
    }

    /// Adds every value of `other`.
    public mutating func merge(_ other: LatencyHistogram) {
        for index in counts.indices { counts[index] += other.counts[index] }
        count += other.count
        maximum = max(maximum, other.maximum)
    }

    /// The value at quantile `quantile` (0...1, e.g. 0.99) in nanoseconds: the middle of the
    /// bucket holding the value of that rank (the exact value below 64 ns); nil when empty.
    public func value(atQuantile quantile: Double) -> Int64? {
        guard count > 0 else { return nil }
        let rank = max(1, Int((quantile * Double(count)).rounded(.up)))
        var seen = 0
        for (index, bucketCount) in counts.enumerated() where bucketCount > 0 {
            seen += bucketCount
            if seen >= rank { return min(Self.middle(of: index), maximum) }
        }
        return maximum
    }

    /// The bucket of `value` (≥ 0).
    static func index(of value: Int64) -> Int {
        if value < Int64(subBuckets) { return Int(value) }
        let exponent = 63 - value.leadingZeroBitCount  // floor(log2(value)) ≥ subBucketBits
        let shift = exponent - subBucketBits
        let octave = shift + 1
        guard octave <= octaves else { return subBuckets * (octaves + 1) - 1 }
        let sub = Int(value >> Int64(shift)) - subBuckets
        return octave * subBuckets + sub
    }

    /// The middle of bucket `index`, ns.
    static func middle(of index: Int) -> Int64 {
        if index < subBuckets { return Int64(index) }
        let octave = index / subBuckets
        let sub = index % subBuckets
        let shift = octave - 1
        let low = Int64(subBuckets + sub) << Int64(shift)
        return low + (Int64(1) << Int64(shift)) / 2
    }
}
