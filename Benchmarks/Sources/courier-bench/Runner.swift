import BenchSupport
import Foundation

/// One client's run of one case, as measured by its child process and checked by the parent.
struct Measurement: Sendable {
    var client: ClientKind
    var report: ChildReport?
    /// TCP connections the server accepted during the run.
    var connections: Int?
    /// What went wrong: child errors, failed checks, a crash or a hang.
    var problems: [String]
    /// requests/s or MB/s (10^6 bytes per second).
    var value: Double
    var cpuMicrosPerRequest: Double
    var cpuMicrosPerMiB: Double?
    var peakRSSMiB: Double
    var baselineRSSMiB: Double
}

/// Every accepted round of one case.
struct CaseSummary: Sendable {
    var benchCase: BenchCase
    var target: Target
    var rounds: [[ClientKind: Measurement]]
    var discarded: Int
    var discardNotes: [String]
    var clients: [ClientKind]
    /// The share of the machine the host stole during each accepted round.
    var steal: [Double] = []
}

/// Runs the children, round by round, and throws away rounds that other processes disturbed.
struct Runner {
    let options: Run
    let plan: Plan
    let clients: [ClientKind]
    let executable: String

    init(options: Run, plan: Plan, clients: [ClientKind]) {
        self.options = options
        self.plan = plan
        self.clients = clients
        self.executable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    }

    func measure(_ benchCase: BenchCase, _ target: Target) async -> CaseSummary {
        log("== \(benchCase.rawValue) against \(target.serverName): \(target.url.absoluteString)")
        var summary = CaseSummary(benchCase: benchCase, target: target, rounds: [], discarded: 0, discardNotes: [], clients: clients)
        var uploadHash: String?
        while summary.rounds.count < options.rounds {
            await waitForQuiet()
            let probe = ForeignLoadProbe()
            var round: [ClientKind: Measurement] = [:]
            for client in clients {
                var measurement = await runChild(client, benchCase, target)
                if benchCase == .upload256m, let hash = measurement.report?.uploadSHA256 {
                    if uploadHash == nil { uploadHash = hash }
                    if hash != uploadHash {
                        measurement.problems.append("the server's SHA-256 \(hash) differs from the first upload's \(uploadHash ?? "")")
                    }
                }
                round[client] = measurement
            }
            let (foreign, steal) = probe.foreignShare()
            let line = clients.compactMap { client in
                round[client].map { "\(client.rawValue) \(formatValue($0.value)) \(benchCase.unit)\($0.problems.isEmpty ? "" : " (PROBLEM)")" }
            }.joined(separator: " | ")
            let load = String(format: "others used %.0f%% of the machine (steal %.0f%%)", foreign * 100, steal * 100)
            if foreign > options.busyThreshold, summary.discarded < options.maxDiscards {
                summary.discarded += 1
                let note = "discarded a round: \(load) [\(line)]"
                summary.discardNotes.append(note)
                log("  \(note)")
                continue
            }
            summary.rounds.append(round)
            summary.steal.append(steal)
            log("  round \(summary.rounds.count): \(line); \(load)")
            for client in clients {
                for problem in round[client]?.problems ?? [] { log("  PROBLEM \(client.rawValue): \(problem)") }
            }
        }
        return summary
    }

    /// Waits, up to `--quiet-wait` seconds, until no build runs and others use less than the
    /// busy threshold over one second.
    func waitForQuiet() async {
        let deadline = ContinuousClock.now + .seconds(options.quietWait)
        var said = false
        while true {
            let builds = runningBuildProcesses()
            let probe = ForeignLoadProbe()
            try? await Task.sleep(for: .seconds(1))
            let (foreign, _) = probe.foreignShare()
            if builds.isEmpty, foreign <= options.busyThreshold { return }
            if ContinuousClock.now >= deadline {
                log("  machine still busy after \(Int(options.quietWait)) s (\(builds.prefix(4).joined(separator: ", "))); going on, disturbed rounds will be discarded")
                return
            }
            if !said {
                log(String(format: "  waiting for a quiet machine: others use %.0f%%; builds: %@", foreign * 100, builds.prefix(4).joined(separator: ", ")))
                said = true
            }
            try? await Task.sleep(for: .seconds(2))
        }
    }

    func runChild(_ client: ClientKind, _ benchCase: BenchCase, _ target: Target) async -> Measurement {
        var arguments = [
            "run-one", "--client", client.rawValue, "--case", benchCase.rawValue,
            "--url", target.url.absoluteString,
            "--concurrency", String(options.concurrency),
            "--connections", String(options.connections),
            "--upload-bytes", String(target.expectedBytes),
            "--timeout", String(options.timeout),
        ]
        if let requests = options.requests { arguments += ["--requests", String(requests)] }
        let downloadPath = "\(options.scratch)/download-\(client.rawValue).bin"
        if benchCase == .download256m {
            try? FileManager.default.removeItem(atPath: downloadPath)
            arguments += ["--output", downloadPath]
        }
        if benchCase == .upload256m, let file = plan.uploadFile { arguments += ["--upload-file", file] }

        let connectionsBefore = target.counter.read()
        let (output, status) = await Self.spawn(executable, arguments, killAfter: options.timeout + 60)
        let connectionsAfter = target.counter.read()

        var measurement = Measurement(
            client: client, report: nil, connections: nil, problems: [], value: 0,
            cpuMicrosPerRequest: 0, cpuMicrosPerMiB: nil, peakRSSMiB: 0, baselineRSSMiB: 0
        )
        if let before = connectionsBefore, let after = connectionsAfter {
            measurement.connections = after - before - target.counter.overhead
        }
        let lastLine = String(decoding: output, as: UTF8.self).split(separator: "\n").last.map(String.init) ?? ""
        guard let report = try? JSONDecoder().decode(ChildReport.self, from: Data(lastLine.utf8)) else {
            measurement.problems.append("the child exited with status \(status) and no report; its stdout ended: \(lastLine.suffix(300))")
            return measurement
        }
        measurement.report = report
        if status != 0 { measurement.problems.append("the child exited with status \(status)") }
        if report.timedOut { measurement.problems.append("HUNG: \(report.errorSamples.last ?? "")") }
        if report.errors > 0 {
            measurement.problems.append("\(report.errors) of \(report.requests) requests failed: \(report.errorSamples.joined(separator: "; "))")
        }

        let mib = Double(1 << 20)
        switch benchCase {
        case .sequentialSmall, .concurrentSmall:
            let expected = target.expectedBytes * Int64(report.requests)
            if report.bytes != expected {
                measurement.problems.append("received \(report.bytes) body bytes, expected \(expected)")
            }
            measurement.value = Double(report.requests) / report.seconds
        case .download256m:
            let size = (try? FileManager.default.attributesOfItem(atPath: downloadPath)[.size] as? NSNumber)?.int64Value ?? -1
            if report.bytes != target.expectedBytes || size != target.expectedBytes {
                measurement.problems.append("downloaded \(report.bytes) bytes, file has \(size), expected \(target.expectedBytes)")
            } else if let origin = target.origin, !Self.sameContents(downloadPath, origin) {
                measurement.problems.append("the downloaded file differs from \(origin)")
            }
            try? FileManager.default.removeItem(atPath: downloadPath)
            measurement.value = Double(target.expectedBytes) / 1e6 / report.seconds
            measurement.cpuMicrosPerMiB = Double(report.cpuMicros) / (Double(target.expectedBytes) / mib)
        case .upload256m:
            // The child already failed the run when the server read a different count.
            measurement.value = Double(target.expectedBytes) / 1e6 / report.seconds
            measurement.cpuMicrosPerMiB = Double(report.cpuMicros) / (Double(target.expectedBytes) / mib)
        }
        measurement.cpuMicrosPerRequest = Double(report.cpuMicros) / Double(max(1, report.requests))
        measurement.peakRSSMiB = Double(report.peakRSSKiB) / 1024
        measurement.baselineRSSMiB = Double(report.baselineRSSKiB) / 1024
        return measurement
    }

    static func sameContents(_ a: String, _ b: String) -> Bool {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/cmp")
        process.arguments = ["-s", a, b]
        guard (try? process.run()) != nil else { return false }
        process.waitUntilExit()
        return process.terminationStatus == 0
    }

    /// Runs `executable arguments`, returns its stdout and exit status; stderr passes through.
    /// Kills it (SIGKILL) after `killAfter` seconds.
    static func spawn(_ executable: String, _ arguments: [String], killAfter: Double) async -> (Data, Int32) {
        await spawnChild(executable, arguments, killAfter: killAfter)
    }
}
