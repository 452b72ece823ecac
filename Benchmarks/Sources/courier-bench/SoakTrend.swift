/// One reading of a soak run: after `requests` requests, the process's resident set and its
/// open file descriptors.
struct SoakSample: Codable, Sendable, Equatable {
    /// Requests finished when the sample was taken.
    var requests: Int
    /// VmRSS from /proc/self/status, KiB.
    var rssKiB: Int64
    /// Entries in /proc/self/fd.
    var openFDs: Int
    /// Seconds since the workload started.
    var seconds: Double
}

/// Least-squares trends over soak samples: pure arithmetic, no I/O.
enum SoakTrend {
    /// The least-squares slope of `y` over `x` (units of y per unit of x), or `nil` with fewer
    /// than two distinct x values.
    static func slope(_ points: [(x: Double, y: Double)]) -> Double? {
        guard points.count >= 2 else { return nil }
        let n = Double(points.count)
        let meanX = points.reduce(0) { $0 + $1.x } / n
        let meanY = points.reduce(0) { $0 + $1.y } / n
        var covariance = 0.0
        var varianceX = 0.0
        for point in points {
            covariance += (point.x - meanX) * (point.y - meanY)
            varianceX += (point.x - meanX) * (point.x - meanX)
        }
        guard varianceX > 0 else { return nil }
        return covariance / varianceX
    }

    /// RSS growth in KiB per 100,000 requests over `samples`.
    static func rssKiBPer100k(_ samples: [SoakSample]) -> Double? {
        slope(samples.map { (Double($0.requests), Double($0.rssKiB)) }).map { $0 * 100_000 }
    }

    /// Open-descriptor growth per 100,000 requests over `samples`.
    static func fdsPer100k(_ samples: [SoakSample]) -> Double? {
        slope(samples.map { (Double($0.requests), Double($0.openFDs)) }).map { $0 * 100_000 }
    }
}
