import BenchSupport
import Foundation

/// The table on stdout and the `--json` file: per case and client, the median and range over
/// the accepted rounds, CPU per operation (client and server), peak RSS, connections, and each
/// client against the better peer (websocket-kit or Hummingbird, whichever has the higher median).
struct WSReport {
    let summaries: [CaseSummary]

    /// One client on one case over the accepted rounds.
    struct Row {
        var client: WSClientKind
        var median: Double
        var min: Double
        var max: Double
        var cpuPerOperation: Double
        var serverCPUPerOperation: Double
        var peakRSSMiB: Double
        var baselineRSSMiB: Double
        var connections: Int?
        var problems: [String]
    }

    func rows(_ summary: CaseSummary) -> [Row] {
        summary.clients.compactMap { client in
            let runs = summary.rounds.rounds.compactMap { $0[client] }
            guard !runs.isEmpty else { return nil }
            let values = runs.map(\.value)
            return Row(
                client: client,
                median: median(values),
                min: values.min() ?? 0,
                max: values.max() ?? 0,
                cpuPerOperation: median(runs.map(\.cpuMicrosPerOperation)),
                serverCPUPerOperation: median(runs.map(\.serverCPUMicrosPerOperation)),
                peakRSSMiB: runs.map(\.peakRSSMiB).max() ?? 0,
                baselineRSSMiB: runs.map(\.baselineRSSMiB).max() ?? 0,
                connections: runs.allSatisfy { $0.connections != nil }
                    ? Int(median(runs.compactMap(\.connections).map(Double.init)).rounded()) : nil,
                problems: runs.flatMap(\.problems)
            )
        }
    }

    /// The peer with the higher median that ran without problems.
    func bestPeer(_ rows: [Row]) -> Row? {
        rows.filter { !$0.client.isCourier && $0.problems.isEmpty && $0.median > 0 }.max { $0.median < $1.median }
    }

    /// For the RFC 8441 openings: each Courier client's median and CPU per opening over its own
    /// HTTP/1.1 TLS openings (`open-tls`, the case before or after in the same run), with whether
    /// the ranges separate; nil for other cases or without `open-tls` in the run.
    func againstHTTP1Openings(_ summary: CaseSummary) -> String? {
        guard summary.benchCase.workload == .open(.http2Stream),
            let http1 = summaries.first(where: { $0.benchCase.workload == .open(.http1Upgrade) })
        else { return nil }
        let baseline = rows(http1)
        let ratios = rows(summary).filter(\.client.isCourier).compactMap { row -> String? in
            guard let base = baseline.first(where: { $0.client == row.client }), base.median > 0, base.cpuPerOperation > 0 else {
                return nil
            }
            let ranges = row.min > base.max || row.max < base.min ? "separate" : "overlap"
            return "\(row.client.rawValue) \(String(format: "%.2f×", row.median / base.median)) "
                + "(cpu \(String(format: "%.2f×", row.cpuPerOperation / base.cpuPerOperation)), ranges \(ranges))"
        }
        guard !ratios.isEmpty else { return nil }
        return "against the same client's \(http1.benchCase.rawValue): " + ratios.joined(separator: ", ")
    }

    var hasProblems: Bool {
        summaries.contains { summary in rows(summary).contains { !$0.problems.isEmpty } }
    }

    func table() -> String {
        let header = [
            "case", "client", "median", "min–max", "unit", "cpu µs/op", "server µs/op", "peak RSS MiB", "base RSS",
            "conns", "÷ best peer", "cpu ÷ best peer", "ranges",
        ]
        var lines: [[String]] = []
        var footnotes: [String] = []
        for summary in summaries {
            let benchCase = summary.benchCase
            let rows = rows(summary)
            let best = bestPeer(rows)
            for client in summary.clients {
                guard let row = rows.first(where: { $0.client == client }) else {
                    if !client.supports(benchCase) {
                        lines.append([benchCase.rawValue, client.rawValue, "—", "—", benchCase.unit] + Array(repeating: "—", count: header.count - 5))
                    }
                    continue
                }
                var ratio = "—"
                var cpuRatio = "—"
                var ranges = "—"
                if let best, row.client == best.client {
                    ratio = "best peer"
                } else if let best, row.median > 0, row.cpuPerOperation > 0 {
                    ratio = String(format: "%.2f×", row.median / best.median)
                    cpuRatio = String(format: "%.2f×", row.cpuPerOperation / best.cpuPerOperation)
                    ranges = row.min > best.max || row.max < best.min ? "separate" : "overlap"
                }
                lines.append([
                    benchCase.rawValue,
                    row.client.rawValue + (row.problems.isEmpty ? "" : " (!)"),
                    formatValue(row.median),
                    "\(formatValue(row.min))–\(formatValue(row.max))",
                    benchCase.unit,
                    formatValue(row.cpuPerOperation),
                    formatValue(row.serverCPUPerOperation),
                    String(format: "%.1f", row.peakRSSMiB),
                    String(format: "%.1f", row.baselineRSSMiB),
                    row.connections.map(String.init) ?? "?",
                    ratio,
                    cpuRatio,
                    ranges,
                ])
                for problem in Set(row.problems).sorted() {
                    footnotes.append("(!) \(benchCase.rawValue) \(row.client.rawValue): \(problem)")
                }
            }
            var line = "\(benchCase.rawValue): \(summary.url); \(summary.rounds.rounds.count) rounds accepted, "
                + "\(summary.rounds.discarded) discarded; others used \(percentRange(summary.rounds.foreign)) of the machine, "
                + "host steal \(percentRange(summary.rounds.steal))"
            if let best {
                let courier = rows.filter(\.client.isCourier).map { row in
                    "\(row.client.rawValue) \(String(format: "%.2f×", row.median / best.median))"
                }
                if !courier.isEmpty { line += "; against \(best.client.rawValue): " + courier.joined(separator: ", ") }
            }
            if let against = againstHTTP1Openings(summary) { line += "; " + against }
            footnotes.append(line)
        }
        var out = alignedColumns(header: header, rows: lines)
        out.append("")
        out += footnotes
        out.append(
            "op = one round trip (echo cases: send a message, receive and check its echo) or one opening (open-tls: connect, "
                + "TLS, Upgrade, one 32-byte echo, close; open-h2: an RFC 8441 stream of the open HTTP/2 connection, one 32-byte "
                + "echo, close); cpu = getrusage user+sys of the client's child process over the timed part; "
                + "server = the echo server process's CPU over the whole child run; peak RSS = the child's VmHWM (max over rounds), "
                + "base RSS = its VmHWM before the client existed; conns = TCP connections the server accepted (median); "
                + "÷ best peer = this median over the better peer's (above 1: faster); cpu ÷ best peer = CPU per op over the better "
                + "peer's (below 1: less); ratios under ~1.3× are unresolved unless the ranges separate."
        )
        return out.joined(separator: "\n")
    }

    /// One row of the `--json` file.
    struct JSONRow: Encodable {
        var benchCase: String
        var client: String
        var value: Double
        var min: Double
        var max: Double
        var unit: String
        var cpuMicrosPerOperation: Double
        var serverCPUMicrosPerOperation: Double
        var peakRSSMiB: Double
        var problems: [String]

        /// The file's key names.
        enum CodingKeys: String, CodingKey {
            case benchCase = "case"
            case client, value, min, max, unit, problems
            case cpuMicrosPerOperation = "cpu_us_per_op"
            case serverCPUMicrosPerOperation = "server_cpu_us_per_op"
            case peakRSSMiB = "peak_rss_mib"
        }
    }

    /// The `--json` file: every row of every case.
    struct JSONFile: Encodable {
        var results: [JSONRow]
    }

    func json() throws -> Data {
        func rounded(_ value: Double) -> Double { (value * 10).rounded() / 10 }
        let results = summaries.flatMap { summary in
            rows(summary).map { row in
                JSONRow(
                    benchCase: summary.benchCase.rawValue, client: row.client.rawValue, value: rounded(row.median),
                    min: rounded(row.min), max: rounded(row.max), unit: summary.benchCase.unit,
                    cpuMicrosPerOperation: rounded(row.cpuPerOperation),
                    serverCPUMicrosPerOperation: rounded(row.serverCPUPerOperation),
                    peakRSSMiB: rounded(row.peakRSSMiB), problems: Array(Set(row.problems)).sorted()
                )
            }
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        return try encoder.encode(JSONFile(results: results)) + Data("\n".utf8)
    }
}
