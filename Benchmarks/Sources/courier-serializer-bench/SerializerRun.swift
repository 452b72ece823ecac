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
    @Option(help: "Accepted rounds per case (each round runs every variant once, in order).")
    var rounds = 3
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
    @Option(help: "Discard a round when processes outside the benchmark used more than this share of the machine.")
    var busyThreshold = 0.10
    @Option(help: "Discard at most this many rounds per case (then accept and say so).")
    var maxDiscards = 6
    @Option(help: "Before each round, wait up to this many seconds for the machine to be quiet.")
    var quietWait: Double = 180
    @Option(help: "A child that runs longer than this many seconds is killed and reported.")
    var timeout: Double = 600

    func run() async throws {
        let caseList: [SerializerCase]
        if cases == "all" {
            caseList = SerializerCase.allCases
        } else {
            caseList = try cases.split(separator: ",").map { name in
                guard let value = SerializerCase(rawValue: String(name)) else { throw ValidationError("unknown case \(name)") }
                return value
            }
        }
        guard rounds >= 1 else { throw ValidationError("--rounds must be at least 1") }
        if caseList.contains(.multipart) {
            // Written once here so that no child times the writing.
            let shape = Workloads.MultipartShape(mebibytes: mib)
            let path = try Workloads.multipartFile(directory: scratch, bytes: shape.fileBytes)
            log("multipart file part: \(path) (\(shape.fileBytes >> 20) MiB) + \(shape.dataParts) data parts of 1 MiB")
        }
        log("courier-serializer-bench: rounds \(rounds); cores \(Int(MachineCPU.cores)) (nothing pinned)")
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
        var summary = SerializerSummary(benchCase: benchCase)
        while summary.rounds.count < rounds {
            await waitForQuiet()
            let probe = ForeignLoadProbe()
            var round: [Variant: SerializerReport] = [:]
            for variant in benchCase.variants { round[variant] = await runChild(benchCase, variant) }
            let (foreign, steal) = probe.foreignShare()
            let line = benchCase.variants.compactMap { variant in
                round[variant].map { "\(variant.rawValue) \(formatValue($0.value))\($0.problems.isEmpty ? "" : " (PROBLEM)")" }
            }.joined(separator: " | ")
            let load = String(format: "others used %.0f%% of the machine (steal %.0f%%)", foreign * 100, steal * 100)
            if foreign > busyThreshold, summary.discarded < maxDiscards {
                summary.discarded += 1
                log("  discarded a round: \(load) [\(line)]")
                continue
            }
            summary.rounds.append(round)
            summary.steal.append(steal)
            summary.foreign.append(foreign)
            log("  round \(summary.rounds.count): \(line) \(benchCase.unit); \(load)")
            for (variant, report) in round {
                for problem in report.problems { log("  PROBLEM \(variant.rawValue): \(problem)") }
            }
        }
        return summary
    }

    /// Waits, up to `--quiet-wait` seconds, until no build runs and others use less than the
    /// busy threshold over one second.
    func waitForQuiet() async {
        let deadline = ContinuousClock.now + .seconds(quietWait)
        var said = false
        while true {
            let builds = runningBuildProcesses()
            let probe = ForeignLoadProbe()
            try? await Task.sleep(for: .seconds(1))
            let (foreign, _) = probe.foreignShare()
            if builds.isEmpty, foreign <= busyThreshold { return }
            if ContinuousClock.now >= deadline {
                log("  machine still busy after \(Int(quietWait)) s (\(builds.prefix(4).joined(separator: ", "))); going on, disturbed rounds will be discarded")
                return
            }
            if !said {
                log(String(format: "  waiting for a quiet machine: others use %.0f%%; builds: %@", foreign * 100, builds.prefix(4).joined(separator: ", ")))
                said = true
            }
            try? await Task.sleep(for: .seconds(2))
        }
    }

    func runChild(_ benchCase: SerializerCase, _ variant: Variant) async -> SerializerReport {
        var arguments = [
            "run-one", "--case", benchCase.rawValue, "--variant", variant.rawValue, "--warmup", String(warmup),
            "--keys", String(keys), "--json-mb", String(jsonMB), "--mib", String(mib), "--escape-mb", String(escapeMB),
            "--scratch", scratch,
        ]
        if let iterations { arguments += ["--iterations", String(iterations)] }
        let (output, status) = await spawnChild(currentExecutablePath, arguments, killAfter: timeout)
        let lastLine = String(decoding: output, as: UTF8.self).split(separator: "\n").last.map(String.init) ?? ""
        guard var report = try? JSONDecoder().decode(SerializerReport.self, from: Data(lastLine.utf8)) else {
            return SerializerReport(
                benchCase: benchCase.rawValue, variant: variant.rawValue, value: 0, iterationValues: [], inputBytes: 0,
                outputBytes: 0, cpuMicrosPerOperation: 0, peakRSSKiB: 0, baselineRSSKiB: 0,
                problems: ["the child exited with status \(status) and no report; its stdout ended: \(lastLine.suffix(300))"])
        }
        if status != 0 { report.problems.append("the child exited with status \(status)") }
        return report
    }
}

/// Every accepted round of one case.
struct SerializerSummary {
    var benchCase: SerializerCase
    var rounds: [[Variant: SerializerReport]] = []
    var discarded = 0
    var steal: [Double] = []
    var foreign: [Double] = []
}
