import BenchSupport
import Foundation

/// The table on stdout and the `--json` file.
struct Report {
    let summaries: [CaseSummary]
    let notes: [String]

    /// The statistics of one client on one case over the accepted rounds.
    struct Row {
        var benchCase: BenchCase
        var client: ClientKind
        var median: Double
        var min: Double
        var max: Double
        var cpuPerRequest: Double
        var cpuPerMiB: Double?
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
                benchCase: summary.benchCase,
                client: client,
                median: median(values),
                min: values.min() ?? 0,
                max: values.max() ?? 0,
                cpuPerRequest: median(runs.map(\.cpuMicrosPerRequest)),
                cpuPerMiB: runs.allSatisfy { $0.cpuMicrosPerMiB != nil } ? median(runs.compactMap(\.cpuMicrosPerMiB)) : nil,
                peakRSSMiB: runs.map(\.peakRSSMiB).max() ?? 0,
                baselineRSSMiB: runs.map(\.baselineRSSMiB).max() ?? 0,
                connections: runs.allSatisfy { $0.connections != nil }
                    ? Int(median(runs.compactMap(\.connections).map(Double.init)).rounded()) : nil,
                problems: runs.flatMap(\.problems)
            )
        }
    }

    var hasProblems: Bool {
        summaries.contains { summary in rows(summary).contains { !$0.problems.isEmpty } }
    }

    /// The client's name in the table; reference rows say so.
    static func label(_ client: ClientKind) -> String {
        client.rawValue + (client.isReference ? " (ref)" : "")
    }

    func table() -> String {
        let header = [
            "case", "client", "median", "min–max", "unit", "cpu µs/req", "cpu µs/MiB", "peak RSS MiB",
            "base RSS", "conns", "engine ÷ this", "cpu engine ÷ this", "ranges",
        ]
        var lines: [[String]] = []
        var footnotes: [String] = []
        for summary in summaries {
            let rows = rows(summary)
            let engine = rows.first { $0.client == .courierEngine }
            for client in summary.clients {
                guard let row = rows.first(where: { $0.client == client }) else {
                    if !client.supports(summary.benchCase) {
                        lines.append(
                            [summary.benchCase.rawValue, Self.label(client), "—", "—", summary.benchCase.unit]
                                + Array(repeating: "—", count: header.count - 5))
                    }
                    continue
                }
                var ratio = "—"
                var cpuRatio = "—"
                var ranges = "—"
                if let engine, row.client != .courierEngine, row.median > 0, row.cpuPerRequest > 0 {
                    ratio = String(format: "%.2f×", engine.median / row.median)
                    cpuRatio = String(format: "%.2f×", engine.cpuPerRequest / row.cpuPerRequest)
                    ranges = engine.min > row.max || engine.max < row.min ? "separate" : "overlap"
                }
                lines.append([
                    row.benchCase.rawValue,
                    Self.label(row.client) + (row.problems.isEmpty ? "" : " (!)"),
                    formatValue(row.median),
                    "\(formatValue(row.min))–\(formatValue(row.max))",
                    row.benchCase.unit,
                    formatValue(row.cpuPerRequest),
                    row.cpuPerMiB.map(formatValue) ?? "",
                    String(format: "%.1f", row.peakRSSMiB),
                    row.client.isReference ? "—" : String(format: "%.1f", row.baselineRSSMiB),
                    row.connections.map(String.init) ?? "?",
                    ratio,
                    cpuRatio,
                    ranges,
                ])
                for problem in Set(row.problems).sorted() {
                    footnotes.append("(!) \(row.benchCase.rawValue) \(row.client.rawValue): \(problem)")
                }
            }
            footnotes.append(
                "\(summary.benchCase.rawValue): \(summary.target.serverName) \(summary.target.url.absoluteString); "
                    + "\(summary.rounds.rounds.count) rounds accepted, \(summary.rounds.discarded) discarded; "
                    + "host steal \(percentRange(summary.rounds.steal)) of the machine"
            )
        }
        var out = alignedColumns(header: header, rows: lines)
        out.append("")
        out += footnotes
        out += notes.map { "note: \($0)" }
        if summaries.contains(where: { $0.clients.contains(where: \.isReference) }) {
            out.append(
                "(ref) = a reference row: an external tool run as a user runs it, in the same rounds (curl: one process, its wall time "
                    + "including startup; wrk: its own Requests/sec over --wrk-duration, bodies unchecked); cpu and peak RSS are the tool process's "
                    + "(wait4 rusage; VmHWM sampled every 5 ms); — = the tool does not run this case."
            )
        }
        out.append(
            "MB = 10^6 bytes; cpu = getrusage user+sys of the client's child process during the workload; "
                + "peak RSS = the child's VmHWM (max over rounds), base RSS = its VmHWM before the client existed; conns = TCP connections the server accepted (median); "
                + "ratios under ~1.3× are unresolved unless the ranges separate."
        )
        return out.joined(separator: "\n")
    }

    struct JSONRow: Encodable {
        var benchCase: String
        var client: String
        var value: Double
        var unit: String
        var cpuMicrosPerRequest: Double
        var peakRSSMiB: Double
        /// curl or wrk: an external tool's reference row.
        var reference: Bool

        enum CodingKeys: String, CodingKey {
            case benchCase = "case"
            case client
            case value
            case unit
            case cpuMicrosPerRequest = "cpu_us_per_request"
            case peakRSSMiB = "peak_rss_mib"
            case reference
        }
    }

    struct JSONFile: Encodable {
        var results: [JSONRow]
    }

    func json() throws -> Data {
        let results = summaries.flatMap(rows).map { row in
            JSONRow(
                benchCase: row.benchCase.rawValue,
                client: row.client.rawValue,
                value: (row.median * 10).rounded() / 10,
                unit: row.benchCase.unit,
                cpuMicrosPerRequest: (row.cpuPerRequest * 10).rounded() / 10,
                peakRSSMiB: (row.peakRSSMiB * 10).rounded() / 10,
                reference: row.client.isReference
            )
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        return try encoder.encode(JSONFile(results: results)) + Data("\n".utf8)
    }
}
