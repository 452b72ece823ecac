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
    var rounds: AcceptedRounds<[ClientKind: Measurement]>
    var clients: [ClientKind]
}

/// Runs the children, round by round, and throws away rounds that other processes disturbed.
struct Runner {
    let options: Run
    let plan: Plan
    let clients: [ClientKind]

    func measure(_ benchCase: BenchCase, _ target: Target) async -> CaseSummary {
        log("== \(benchCase.rawValue) against \(target.serverName): \(target.url.absoluteString)")
        var uploadHash: String?
        let rounds = await measureRounds(options.roundOptions) {
            var round: [ClientKind: Measurement] = [:]
            for client in clients where client.supports(benchCase) {
                var measurement = await runChild(client, benchCase, target)
                if benchCase == .upload256m, let hash = measurement.report?.uploadSHA256 {
                    if uploadHash == nil { uploadHash = hash }
                    if hash != uploadHash {
                        measurement.problems.append("the server's SHA-256 \(hash) differs from the first upload's \(uploadHash ?? "")")
                    }
                }
                round[client] = measurement
            }
            return round
        } describe: { round in
            let measurements = clients.compactMap { round[$0] }
            return RoundLog(
                entries: measurements.map { measurement in
                    "\(measurement.client.rawValue) \(formatValue(measurement.value)) \(benchCase.unit)"
                        + (measurement.problems.isEmpty ? "" : " (PROBLEM)")
                },
                problems: measurements.flatMap { measurement in
                    measurement.problems.map { "\(measurement.client.rawValue): \($0)" }
                })
        }
        return CaseSummary(benchCase: benchCase, target: target, rounds: rounds, clients: clients)
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
        if client == .wrk { arguments += ["--duration", String(options.wrkDuration)] }
        if let requests = options.requests { arguments += ["--requests", String(requests)] }
        let downloadPath = "\(options.scratch)/download-\(client.rawValue).bin"
        if benchCase == .download256m {
            try? FileManager.default.removeItem(atPath: downloadPath)
            arguments += ["--output", downloadPath]
        }
        if benchCase == .upload256m, let file = plan.uploadFile { arguments += ["--upload-file", file] }

        let connectionsBefore = target.counter.read()
        let killAfter = (client == .wrk ? options.wrkDuration : options.timeout) + 60
        let (child, childProblems) = await runChildReport(ChildReport.self, arguments, killAfter: killAfter)
        let connectionsAfter = target.counter.read()

        var measurement = Measurement(
            client: client, report: child, connections: nil, problems: childProblems, value: 0,
            cpuMicrosPerRequest: 0, cpuMicrosPerMiB: nil, peakRSSMiB: 0, baselineRSSMiB: 0
        )
        if let before = connectionsBefore, let after = connectionsAfter {
            measurement.connections = after - before - target.counter.overhead
        }
        guard let report = child else { return measurement }
        if report.timedOut { measurement.problems.append("HUNG: \(report.errorSamples.last ?? "")") }
        if report.errors > 0 {
            measurement.problems.append("\(report.errors) of \(report.requests) requests failed: \(report.errorSamples.joined(separator: "; "))")
        }

        let mib = Double(1 << 20)
        switch benchCase {
        case .sequentialSmall, .concurrentSmall:
            let expected = target.expectedBytes * Int64(report.requests)
            if client.checksBodyBytes, report.bytes != expected {
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
}
