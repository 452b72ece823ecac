import Foundation
import Histogram

/// What a benchmark run measured, gathered request by request: latencies in an HdrHistogram
/// (microseconds, three significant digits), status codes, errors by kind and bytes received.
/// A value; the runner keeps one behind a lock.
struct BenchTally: Sendable {
    /// Latencies above this (one hour, in microseconds) are recorded as this.
    static let highestLatencyMicroseconds: UInt64 = 3_600_000_000

    var latencies = Histogram<UInt64>(
        lowestDiscernibleValue: 1, highestTrackableValue: BenchTally.highestLatencyMicroseconds,
        numberOfSignificantValueDigits: .three)
    var statusCodes: [Int: Int] = [:]
    var errorsByKind: [String: Int] = [:]
    /// One message per error kind, the first seen, to show what the errors were.
    var errorExamples: [String: String] = [:]
    var bytesReceived: Int64 = 0
    var completed = 0

    /// Records one finished request: its latency, and its status or its error.
    mutating func record(_ sample: BenchSample) {
        completed += 1
        let microseconds = sample.latency.components.seconds * 1_000_000
            + sample.latency.components.attoseconds / 1_000_000_000_000
        latencies.record(min(UInt64(clamping: max(microseconds, 1)), Self.highestLatencyMicroseconds))
        bytesReceived += sample.bytesReceived
        if let status = sample.statusCode { statusCodes[status, default: 0] += 1 }
        if let error = sample.error {
            errorsByKind[error.kind, default: 0] += 1
            if errorExamples[error.kind] == nil { errorExamples[error.kind] = error.message }
        }
    }

    var errorCount: Int { errorsByKind.values.reduce(0, +) }
}

/// One request's outcome.
struct BenchSample: Sendable {
    var latency: Duration
    var statusCode: Int?
    var bytesReceived: Int64
    var error: BenchError?
}

/// A failed request: a short kind for grouping (`connect`, `timeout`, …) and the message.
struct BenchError: Sendable, Equatable {
    var kind: String
    var message: String
}

/// The summary of a run, printed as text (like wrk or hey) or as JSON.
struct BenchReport: Sendable, Encodable {
    struct Latency: Sendable, Encodable {
        var p50: Double
        var p90: Double
        var p99: Double
        var p999: Double
        var max: Double
        var min: Double
        var mean: Double

        enum CodingKeys: String, CodingKey {
            case p50, p90, p99, p999 = "p99.9", max, min, mean
        }
    }

    var url: String
    var method: String
    var concurrency: Int
    var requests: Int
    var errors: Int
    var durationSeconds: Double
    var requestsPerSecond: Double
    var bytesReceived: Int64
    var bytesPerSecond: Double
    /// Milliseconds; zero when no request finished.
    var latencyMilliseconds: Latency
    /// Status code (as a string, for JSON) → count.
    var statusCodes: [String: Int]
    var errorsByKind: [String: Int]
    var errorExamples: [String: String]

    init(url: String, method: String, concurrency: Int, tally: BenchTally, elapsed: Duration) {
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let histogram = tally.latencies
        func milliseconds(_ microseconds: UInt64) -> Double { Double(microseconds) / 1000 }
        let empty = histogram.totalCount == 0
        self.url = url
        self.method = method
        self.concurrency = concurrency
        self.requests = tally.completed
        self.errors = tally.errorCount
        self.durationSeconds = seconds
        self.requestsPerSecond = seconds > 0 ? Double(tally.completed) / seconds : 0
        self.bytesReceived = tally.bytesReceived
        self.bytesPerSecond = seconds > 0 ? Double(tally.bytesReceived) / seconds : 0
        self.latencyMilliseconds = Latency(
            p50: empty ? 0 : milliseconds(histogram.valueAtPercentile(50)),
            p90: empty ? 0 : milliseconds(histogram.valueAtPercentile(90)),
            p99: empty ? 0 : milliseconds(histogram.valueAtPercentile(99)),
            p999: empty ? 0 : milliseconds(histogram.valueAtPercentile(99.9)),
            max: empty ? 0 : milliseconds(histogram.max),
            min: empty ? 0 : milliseconds(histogram.min),
            mean: empty ? 0 : histogram.mean / 1000)
        self.statusCodes = Dictionary(uniqueKeysWithValues: tally.statusCodes.map { (String($0.key), $0.value) })
        self.errorsByKind = tally.errorsByKind
        self.errorExamples = tally.errorExamples
    }

    /// The plain-text report, one fact per line.
    var text: String {
        var lines = [
            "  \(requests) requests in \(Self.seconds(durationSeconds)), \(errors) error\(errors == 1 ? "" : "s")",
            "  Requests/s:  " + String(format: "%.1f", requestsPerSecond),
            "  Transfer:    \(Self.bytes(bytesPerSecond))/s  (\(Self.bytes(Double(bytesReceived))) received)",
            "  Latency:     p50 \(Self.ms(latencyMilliseconds.p50))  p90 \(Self.ms(latencyMilliseconds.p90))  "
                + "p99 \(Self.ms(latencyMilliseconds.p99))  p99.9 \(Self.ms(latencyMilliseconds.p999))  "
                + "max \(Self.ms(latencyMilliseconds.max))",
        ]
        let statuses = statusCodes.sorted { $0.key < $1.key }.map { "\($0.key) × \($0.value)" }
        lines.append("  Status:      " + (statuses.isEmpty ? "none" : statuses.joined(separator: ", ")))
        if !errorsByKind.isEmpty {
            lines.append("  Errors:")
            for (kind, count) in errorsByKind.sorted(by: { $0.key < $1.key }) {
                lines.append("    \(kind) × \(count): \(errorExamples[kind] ?? "")")
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// Pretty-printed JSON with sorted keys.
    func json() throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(self), as: UTF8.self) + "\n"
    }

    private static func seconds(_ value: Double) -> String { String(format: "%.2f s", value) }

    private static func ms(_ value: Double) -> String {
        value < 10 ? String(format: "%.2f ms", value) : String(format: "%.1f ms", value)
    }

    /// Decimal units, as wrk and hey print them.
    private static func bytes(_ value: Double) -> String {
        switch value {
        case ..<1_000: return String(format: "%.0f B", value)
        case ..<1_000_000: return String(format: "%.1f kB", value / 1_000)
        case ..<1_000_000_000: return String(format: "%.1f MB", value / 1_000_000)
        default: return String(format: "%.2f GB", value / 1_000_000_000)
        }
    }
}
