import BenchSupport
import Foundation

/// One client's measurement at one step, as its `run-one` child reported it.
struct ScalingRun: Sendable {
    var client: ClientKind
    var report: ChildReport?
    /// What went wrong: errors, wrong byte counts, a crash or a hang.
    var problems: [String]
    /// TCP connections nginx accepted while the child ran (warm-up included).
    var connections: Int?

    init(client: ClientKind, report: ChildReport?, problems: [String]) {
        self.client = client
        self.report = report
        self.problems = problems
    }

    var requestsPerSecond: Double {
        guard let report, report.seconds > 0 else { return 0 }
        return Double(report.requests) / report.seconds
    }
}

/// Every accepted round at one number of requests in flight.
struct ScalingStep: Sendable {
    var inFlight: Int
    /// Measured requests per Swift client.
    var requests: Int
    var rounds: AcceptedRounds<[ClientKind: ScalingRun]>
}

/// The table, the targets, the CSV: medians over the accepted rounds of each client at each
/// step, and how its cost grows from the 64 step on.
struct ScalingReport {
    let steps: [ScalingStep]
    let clients: [ClientKind]
    let notes: [String]

    /// The step the growth is measured from.
    static let referenceStep = 64

    /// One client at one step, over the accepted rounds.
    struct Point {
        var client: ClientKind
        var inFlight: Int
        /// Requests measured (the median round's, for wrk which runs for a time).
        var requests: Int
        var rounds: Int
        var rate: Double
        var rateMin: Double
        var rateMax: Double
        var cpuMicrosPerRequest: Double
        var p50Millis: Double?
        var p99Millis: Double?
        /// The largest peak RSS of the rounds, KiB.
        var peakRSSKiB: Int64
        var baselineRSSKiB: Int64
        var connections: Int?
        var problems: [String]
    }

    /// Every client's points in step order; clients with no run at a step have no point there.
    var points: [ClientKind: [Point]] {
        var result: [ClientKind: [Point]] = [:]
        for client in clients {
            result[client] = steps.compactMap { point(client, $0) }
        }
        return result
    }

    func point(_ client: ClientKind, _ step: ScalingStep) -> Point? {
        let runs = step.rounds.rounds.compactMap { $0[client] }
        let reports = runs.compactMap(\.report)
        guard !reports.isEmpty else { return nil }
        let rates = runs.map(\.requestsPerSecond)
        func medianOf(_ values: [Double?]) -> Double? {
            let present = values.compactMap { $0 }
            return present.count == values.count && !present.isEmpty ? median(present) : nil
        }
        let connections = runs.compactMap(\.connections)
        return Point(
            client: client,
            inFlight: step.inFlight,
            requests: Int(median(reports.map { Double($0.requests) })),
            rounds: runs.count,
            rate: median(rates),
            rateMin: rates.min() ?? 0,
            rateMax: rates.max() ?? 0,
            cpuMicrosPerRequest: median(reports.map { Double($0.cpuMicros) / Double(max(1, $0.requests)) }),
            p50Millis: medianOf(reports.map(\.latencyP50Micros)).map { $0 / 1_000 },
            p99Millis: medianOf(reports.map(\.latencyP99Micros)).map { $0 / 1_000 },
            peakRSSKiB: reports.map(\.peakRSSKiB).max() ?? 0,
            baselineRSSKiB: reports.map(\.baselineRSSKiB).max() ?? 0,
            connections: connections.count == runs.count ? Int(median(connections.map(Double.init)).rounded()) : nil,
            problems: runs.flatMap(\.problems)
        )
    }

    var hasProblems: Bool {
        points.values.contains { $0.contains { !$0.problems.isEmpty } }
    }

    /// Peak RSS growth per request in flight from the reference step to `point`, KiB; nil at
    /// the reference step itself or without one.
    func growthKiBPerInFlight(_ point: Point, in line: [Point]) -> Double? {
        guard point.inFlight != Self.referenceStep,
            let reference = line.first(where: { $0.inFlight == Self.referenceStep })
        else { return nil }
        return Double(point.peakRSSKiB - reference.peakRSSKiB) / Double(point.inFlight - reference.inFlight)
    }

    static func label(_ client: ClientKind) -> String {
        client.rawValue + (client.isReference ? " (ref)" : "")
    }

    static func millis(_ value: Double?) -> String {
        guard let value else { return "—" }
        return value < 10 ? String(format: "%.2f", value) : String(format: "%.1f", value)
    }

    /// The command, the notes, the table, the targets and the footnotes.
    func text(command: String) -> String {
        let header = [
            "client", "in flight", "req/s", "min–max", "cpu µs/req", "p50 ms", "p99 ms", "peak RSS MiB",
            "KiB/in-flight vs 64", "conns", "requests",
        ]
        var rows: [[String]] = []
        var problems: [String] = []
        let all = points
        for client in clients {
            let line = all[client] ?? []
            for point in line {
                let growth = growthKiBPerInFlight(point, in: line).map { String(format: "%.1f", $0) } ?? "—"
                rows.append([
                    Self.label(client),
                    formatValue(Double(point.inFlight)),
                    formatValue(point.rate),
                    "\(formatValue(point.rateMin))–\(formatValue(point.rateMax))",
                    String(format: "%.0f", point.cpuMicrosPerRequest),
                    Self.millis(point.p50Millis),
                    Self.millis(point.p99Millis),
                    String(format: "%.1f", Double(point.peakRSSKiB) / 1024),
                    growth,
                    point.connections.map(String.init) ?? "—",
                    formatValue(Double(point.requests)),
                ])
                for problem in point.problems { problems.append("\(client.rawValue) at \(point.inFlight): \(problem)") }
            }
        }
        var lines = ["$ \(command)", ""]
        lines += notes.map { "note: \($0)" }
        lines.append("")
        lines += alignedColumns(header: header, rows: rows, leftAligned: 1)
        lines.append("")
        lines += targetLines(all)
        lines.append("")
        lines.append("Rounds per step: \(steps.map { "\($0.inFlight): \($0.rounds.rounds.count) accepted, \($0.rounds.discarded) discarded, others \(percentRange($0.rounds.foreign)), steal \(percentRange($0.rounds.steal))" }.joined(separator: "; ")).")
        lines.append("req/s is the median round (min–max over the rounds); cpu µs/req, p50 and p99 the median round's; peak RSS the largest VmHWM of the rounds (whole process; wrk's sampled every 5 ms); conns the TCP connections nginx accepted during the child (warm-up included; wrk's include its probe connection).")
        if problems.isEmpty {
            lines.append("No errors; every Swift client's body bytes matched requests × body size.")
        } else {
            lines += problems.map { "PROBLEM \($0)" }
        }
        return lines.joined(separator: "\n")
    }

    /// The targets, from the reference step to the largest: req/s falls by no more than 10 %,
    /// peak RSS grows by less than 64 KiB per request in flight. Verdicts for Courier's
    /// clients; the others' numbers beside them.
    func targetLines(_ all: [ClientKind: [Point]]) -> [String] {
        guard let top = steps.map(\.inFlight).max(), top > Self.referenceStep,
            steps.contains(where: { $0.inFlight == Self.referenceStep })
        else { return ["Targets: need a \(Self.referenceStep) step and a larger one."] }
        var lines = ["Targets from \(Self.referenceStep) to \(formatValue(Double(top))) in flight: req/s falls ≤ 10 %, peak RSS grows < 64 KiB per request in flight"]
        for client in clients {
            let line = all[client] ?? []
            guard let low = line.first(where: { $0.inFlight == Self.referenceStep }),
                let high = line.first(where: { $0.inFlight == top }), low.rate > 0
            else {
                lines.append("  \(Self.label(client)): no points at both steps")
                continue
            }
            let change = high.rate / low.rate - 1
            let growth = Double(high.peakRSSKiB - low.peakRSSKiB) / Double(top - Self.referenceStep)
            let rateHeld = change >= -0.10
            let rssHeld = growth < 64
            let verdict =
                client.rawValue.hasPrefix("courier")
                ? " → req/s target \(rateHeld ? "held" : "MISSED"), RSS target \(rssHeld ? "held" : "MISSED")" : ""
            let overlap =
                min(low.rounds, high.rounds) < 2
                ? "one round: no range" : high.rateMax >= low.rateMin && high.rateMin <= low.rateMax ? "min–max ranges overlap" : "min–max ranges separate"
            lines.append(
                "  \(Self.label(client)): req/s \(formatValue(low.rate)) → \(formatValue(high.rate)) (\(String(format: "%+.1f", change * 100)) %, \(overlap)); "
                    + "peak RSS \(String(format: "%.1f", Double(low.peakRSSKiB) / 1024)) → \(String(format: "%.1f", Double(high.peakRSSKiB) / 1024)) MiB (\(String(format: "%.1f", growth)) KiB per in-flight)\(verdict)"
            )
        }
        return lines
    }

    /// One line per client and step.
    func csv() -> String {
        var lines = [
            "client,in_flight,requests,rounds,req_per_s,req_per_s_min,req_per_s_max,cpu_us_per_req,p50_ms,p99_ms,peak_rss_kib,baseline_rss_kib,rss_kib_per_in_flight_vs_64,connections,problems"
        ]
        let all = points
        for client in clients {
            let line = all[client] ?? []
            for point in line {
                let fields: [String] = [
                    client.rawValue,
                    String(point.inFlight),
                    String(point.requests),
                    String(point.rounds),
                    String(format: "%.1f", point.rate),
                    String(format: "%.1f", point.rateMin),
                    String(format: "%.1f", point.rateMax),
                    String(format: "%.1f", point.cpuMicrosPerRequest),
                    point.p50Millis.map { String(format: "%.3f", $0) } ?? "",
                    point.p99Millis.map { String(format: "%.3f", $0) } ?? "",
                    String(point.peakRSSKiB),
                    String(point.baselineRSSKiB),
                    growthKiBPerInFlight(point, in: line).map { String(format: "%.2f", $0) } ?? "",
                    point.connections.map(String.init) ?? "",
                    String(point.problems.count),
                ]
                lines.append(fields.joined(separator: ","))
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
