import BenchSupport
import Foundation

/// The table on stdout and the `--json` file.
struct SerializerTable {
    let summaries: [SerializerSummary]

    struct Row {
        var benchCase: SerializerCase
        var variant: Variant
        var median: Double
        var min: Double
        var max: Double
        var microsPerOperation: Double
        var cpuMicrosPerOperation: Double
        var inputBytes: Int64
        var outputBytes: Int64
        var peakRSSMiB: Double
        var baselineRSSMiB: Double
        var problems: [String]
    }

    func rows(_ summary: SerializerSummary) -> [Row] {
        summary.benchCase.variants.compactMap { variant in
            let reports = summary.rounds.rounds.compactMap { $0[variant] }
            guard let first = reports.first else { return nil }
            // Each round's value is the median of its child's timed iterations.
            let values = reports.map(\.value)
            let value = median(values)
            let perOperation: Double
            switch summary.benchCase {
            case .queryString: perOperation = value > 0 ? 1e6 / value : 0
            default: perOperation = value > 0 ? Double(first.inputBytes) / value : 0
            }
            return Row(
                benchCase: summary.benchCase, variant: variant, median: value, min: values.min() ?? 0, max: values.max() ?? 0,
                microsPerOperation: perOperation, cpuMicrosPerOperation: median(reports.map(\.cpuMicrosPerOperation)),
                inputBytes: first.inputBytes, outputBytes: first.outputBytes,
                peakRSSMiB: Double(reports.map(\.peakRSSKiB).max() ?? 0) / 1024,
                baselineRSSMiB: Double(reports.map(\.baselineRSSKiB).max() ?? 0) / 1024,
                problems: Array(Set(reports.flatMap(\.problems))).sorted())
        }
    }

    var hasProblems: Bool { summaries.contains { rows($0).contains { !$0.problems.isEmpty } } }

    func render() -> String {
        let header = [
            "case", "variant", "median", "min–max", "unit", "µs/op", "cpu µs/op", "in bytes", "out bytes",
            "peak RSS MiB", "base RSS", "first ÷ this", "ranges",
        ]
        var lines: [[String]] = []
        var footnotes: [String] = []
        for summary in summaries {
            let rows = rows(summary)
            let reference = rows.first
            for row in rows {
                var ratio = "—"
                var ranges = "—"
                if let reference, row.variant != reference.variant, row.median > 0 {
                    ratio = String(format: "%.2f×", reference.median / row.median)
                    ranges = reference.min > row.max || reference.max < row.min ? "separate" : "overlap"
                }
                lines.append([
                    row.benchCase.rawValue, row.variant.rawValue + (row.problems.isEmpty ? "" : " (!)"),
                    formatValue(row.median), "\(formatValue(row.min))–\(formatValue(row.max))", row.benchCase.unit,
                    formatValue(row.microsPerOperation), formatValue(row.cpuMicrosPerOperation),
                    formatValue(Double(row.inputBytes)), row.outputBytes > 0 ? formatValue(Double(row.outputBytes)) : "",
                    String(format: "%.1f", row.peakRSSMiB), String(format: "%.1f", row.baselineRSSMiB), ratio, ranges,
                ])
                for problem in row.problems { footnotes.append("(!) \(row.benchCase.rawValue) \(row.variant.rawValue): \(problem)") }
            }
            footnotes.append(
                "\(summary.benchCase.rawValue): \(summary.rounds.rounds.count) rounds accepted, \(summary.rounds.discarded) discarded; "
                    + "others \(percentRange(summary.rounds.foreign)), host steal \(percentRange(summary.rounds.steal)) of the machine")
        }
        var out = alignedColumns(header: header, rows: lines)
        out.append("")
        out += footnotes
        out.append(
            "MB = 10^6 bytes. median/min–max: over rounds, each round the median of one child's timed iterations. "
                + "µs/op: wall time per call (query-string) or per whole input (the others); cpu µs/op: getrusage user+sys per op. "
                + "in bytes: the document/string/body (query-string: calls per iteration); out bytes: the query string / escaped string. "
                + "peak RSS: the child's VmHWM (max over rounds); base RSS: its VmHWM before the inputs existed. "
                + "first ÷ this: the case's first variant (Courier) over this one, above 1 = Courier faster; "
                + "ratios under ~1.3× are unresolved unless the ranges separate.")
        return out.joined(separator: "\n")
    }

    struct JSONRow: Encodable {
        var benchCase: String
        var variant: String
        var value: Double
        var min: Double
        var max: Double
        var unit: String
        var microsPerOperation: Double
        var cpuMicrosPerOperation: Double
        var inputBytes: Int64
        var outputBytes: Int64
        var peakRSSMiB: Double
        var baselineRSSMiB: Double
        var problems: [String]

        enum CodingKeys: String, CodingKey {
            case benchCase = "case"
            case variant, value, min, max, unit, problems
            case microsPerOperation = "us_per_op"
            case cpuMicrosPerOperation = "cpu_us_per_op"
            case inputBytes = "input_bytes"
            case outputBytes = "output_bytes"
            case peakRSSMiB = "peak_rss_mib"
            case baselineRSSMiB = "base_rss_mib"
        }
    }

    struct JSONFile: Encodable {
        var results: [JSONRow]
    }

    func json() throws -> Data {
        func round1(_ value: Double) -> Double { (value * 10).rounded() / 10 }
        let results = summaries.flatMap(rows).map { row in
            JSONRow(
                benchCase: row.benchCase.rawValue, variant: row.variant.rawValue, value: round1(row.median),
                min: round1(row.min), max: round1(row.max), unit: row.benchCase.unit,
                microsPerOperation: round1(row.microsPerOperation), cpuMicrosPerOperation: round1(row.cpuMicrosPerOperation),
                inputBytes: row.inputBytes, outputBytes: row.outputBytes, peakRSSMiB: round1(row.peakRSSMiB),
                baselineRSSMiB: round1(row.baselineRSSMiB), problems: row.problems)
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        return try encoder.encode(JSONFile(results: results)) + Data("\n".utf8)
    }
}
