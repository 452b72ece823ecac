import ArgumentParser
import BenchSupport
import Foundation

/// `courier-serializer-bench run` (the default): every variant of every selected case, round
/// by round (interleaved), each measurement in a child process; a table on stdout.
struct SerializerRun: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Measure the serializers, variants interleaved round by round."
    )

    @Option(help: "Comma-separated cases, or all: query-string, json-parse, multipart, percent-escape.")
    var cases = "all"
    @Option(help: "Timed iterations in each child (default: 7 query-string, 5 json-parse, 3 multipart, 9 percent-escape).")
    var iterations: Int?
    @Option(help: "Untimed warm-up iterations in each child.")
    var warmup = 1
    @Option(help: "Keys of the query-string dictionary.")
    var keys = 1_000
    @Option(help: "Size of the JSON document in MB (10^6 bytes).")
    var jsonMB = 10
    @Option(help: "Size of the multipart body in MiB.")
    var mib = 256
    @Option(help: "Size of the percent-escape string in MB.")
    var escapeMB = 1
    @Option(help: "Where the multipart file part is written (kept for later runs; delete it when done).")
    var scratch = "/tmp/courier-serializer-bench"
    @Option(help: "Write the results as JSON to this file.")
    var json: String?
    @OptionGroup var roundOptions: RoundOptions
    @Option(help: "A child that runs longer than this many seconds is killed and reported.")
    var timeout: Double = 600

    func run() async throws {
        let caseList = try parseList(cases, as: SerializerCase.self)
        if caseList.contains(.multipart) {
            // Written once here so that no child times the writing.
            let shape = Workloads.MultipartShape(mebibytes: mib)
            let path = try Workloads.multipartFile(directory: scratch, bytes: shape.fileBytes)
            log("multipart file part: \(path) (\(shape.fileBytes >> 20) MiB) + \(shape.dataParts) data parts of 1 MiB")
        }
        log("courier-serializer-bench: rounds \(roundOptions.rounds); cores \(Int(MachineCPU.cores)) (nothing pinned)")
        var summaries: [SerializerSummary] = []
        for benchCase in caseList { summaries.append(await measure(benchCase)) }
        let table = SerializerTable(summaries: summaries)
        print(table.render())
        if let json {
            try table.json().write(to: URL(fileURLWithPath: json))
            log("wrote \(json)")
        }
        if table.hasProblems { throw ExitCode(1) }
    }

    func measure(_ benchCase: SerializerCase) async -> SerializerSummary {
        log("== \(benchCase.rawValue): \(benchCase.variants.map(\.rawValue).joined(separator: ", "))")
        let rounds = await measureRounds(roundOptions) {
            var round: [Variant: SerializerReport] = [:]
            for variant in benchCase.variants { round[variant] = await runChild(benchCase, variant) }
            return round
        } describe: { round in
            let reports = benchCase.variants.compactMap { variant in round[variant].map { (variant, $0) } }
            return RoundLog(
                entries: reports.map { variant, report in
                    "\(variant.rawValue) \(formatValue(report.value))\(report.problems.isEmpty ? "" : " (PROBLEM)")"
                },
                suffix: " \(benchCase.unit)",
                problems: reports.flatMap { variant, report in report.problems.map { "\(variant.rawValue): \($0)" } })
        }
        return SerializerSummary(benchCase: benchCase, rounds: rounds)
    }

    func runChild(_ benchCase: SerializerCase, _ variant: Variant) async -> SerializerReport {
        var arguments = [
            "run-one", "--case", benchCase.rawValue, "--variant", variant.rawValue, "--warmup", String(warmup),
            "--keys", String(keys), "--json-mb", String(jsonMB), "--mib", String(mib), "--escape-mb", String(escapeMB),
            "--scratch", scratch,
        ]
        if let iterations { arguments += ["--iterations", String(iterations)] }
        let (child, problems) = await runChildReport(SerializerReport.self, arguments, killAfter: timeout)
        guard var report = child else {
            return SerializerReport(
                benchCase: benchCase.rawValue, variant: variant.rawValue, value: 0, iterationValues: [], inputBytes: 0,
                outputBytes: 0, cpuMicrosPerOperation: 0, peakRSSKiB: 0, baselineRSSKiB: 0, problems: problems)
        }
        report.problems += problems
        return report
    }
}

/// Every accepted round of one case.
struct SerializerSummary {
    var benchCase: SerializerCase
    var rounds: AcceptedRounds<[Variant: SerializerReport]>
}
