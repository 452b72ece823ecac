import ArgumentParser
import BenchSupport
import Foundation

/// The reference clients: curl's CLI and wrk, run as a user runs them, in a `run-one` child
/// like every other client. Their rows show what this machine and server allow, measured in
/// the same rounds as Courier's.
extension RunOne {
    /// Runs `self.client` (curl or wrk) on `self.benchCase` against `url` and returns the report.
    ///
    /// - Throws: `ValidationError` when the tool does not run this case; ``BenchError`` when it
    ///   is not installed or cannot be started.
    func referenceReport(_ url: URL) throws -> ChildReport {
        guard self.client.supports(benchCase) else {
            throw ValidationError("\(self.client.rawValue) does not run \(benchCase.rawValue)")
        }
        var report = ChildReport(
            client: self.client, benchCase: benchCase, requests: 1, errors: 0,
            errorSamples: [], bytes: 0, uploadSHA256: nil, seconds: 0, cpuMicros: 0,
            peakRSSKiB: 0, baselineRSSKiB: 0, timedOut: false
        )
        let killAfter: Double
        let run: ToolRun
        switch self.client {
        case .curl:
            killAfter = timeout
            run = try curl(url, into: &report)
        case .wrk:
            killAfter = duration + 30
            run = try wrk(url, into: &report)
        default:
            throw ValidationError("\(self.client.rawValue) is not a reference client")
        }
        report.seconds = report.seconds > 0 ? report.seconds : run.seconds
        report.cpuMicros = run.cpuMicros
        report.peakRSSKiB = run.peakRSSKiB
        if run.status == 128 + SIGKILL, run.seconds >= killAfter {
            report.timedOut = true
            report.errorSamples.append("killed after \(Int(killAfter)) s")
        } else if run.status != 0 {
            report.errors = max(report.errors, 1)
            report.errorSamples.append("\(self.client.rawValue) exited with status \(run.status)")
        }
        return report
    }

    /// curl's CLI: sequential-small as one process with a `-K` config of N URLs (curl keeps
    /// the connection alive between them), the download into `--output`, the upload with
    /// `-T` from the upload file. Every transfer's status, connection count and byte count
    /// come from `-w`.
    private func curl(_ url: URL, into report: inout ChildReport) throws -> ToolRun {
        let curl = try ToolProcess.locate("curl")
        let writeOut = "%{http_code} %{num_connects} %{size_download} %{size_upload}\\n"
        switch benchCase {
        case .sequentialSmall:
            let count = requests ?? benchCase.defaultRequests
            report.requests = count
            let config = "\(NSTemporaryDirectory())/courier-bench-curl-\(getpid()).cfg"
            defer { unlink(config) }
            let entry = "url = \"\(url.absoluteString)\"\noutput = \"/dev/null\"\n"
            try String(repeating: entry, count: count).write(toFile: config, atomically: true, encoding: .utf8)
            let run = try ToolProcess.run(curl, ["-sS", "-K", config, "-w", writeOut], killAfter: timeout)
            let transfers = Self.curlTransfers(run.output)
            var connects = 0
            for (index, transfer) in transfers.enumerated() {
                connects += transfer.connects
                report.bytes += transfer.downloaded
                if transfer.status != 200 { fail(&report, "request #\(index): HTTP status \(transfer.status)") }
            }
            if transfers.count != count { fail(&report, "curl reported \(transfers.count) of \(count) transfers") }
            if connects != 1 { fail(&report, "curl opened \(connects) connections for \(count) requests, expected 1") }
            return run
        case .download256m:
            guard let output else { throw ValidationError("download needs --output") }
            let run = try ToolProcess.run(curl, ["-sS", "-o", output, "-w", writeOut, url.absoluteString], killAfter: timeout)
            if let transfer = Self.curlTransfers(run.output).last {
                report.bytes = transfer.downloaded
                if transfer.status != 200 { fail(&report, "HTTP status \(transfer.status)") }
            } else {
                fail(&report, "curl wrote no -w line")
            }
            return run
        case .upload256m:
            guard let uploadFile else { throw ValidationError("the curl upload needs --upload-file") }
            // -T streams the file (--data-binary @file would read it into memory first);
            // -X POST keeps the method the other clients use. curl sends Expect: 100-continue,
            // which the test server answers.
            let run = try ToolProcess.run(
                curl, ["-sS", "-T", uploadFile, "-X", "POST", "-w", "\\n" + writeOut, url.absoluteString],
                killAfter: timeout)
            var lines = run.output.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            while lines.last == "" { lines.removeLast() }
            guard let last = lines.popLast(), let transfer = Self.curlTransfers(last).first else {
                fail(&report, "curl wrote no -w line")
                return run
            }
            if transfer.status != 200 { fail(&report, "HTTP status \(transfer.status)") }
            if transfer.uploaded != uploadBytes { fail(&report, "curl sent \(transfer.uploaded) of \(uploadBytes) bytes") }
            do {
                let answer = try UploadAnswer(json: Data(lines.joined(separator: "\n").utf8))
                report.bytes = answer.bytes
                report.uploadSHA256 = answer.sha256
                if answer.bytes != uploadBytes { fail(&report, "the server read \(answer.bytes) of \(uploadBytes) bytes") }
            } catch {
                fail(&report, String(describing: error))
            }
            return run
        case .concurrentSmall:
            throw ValidationError("curl does not run concurrent-small")
        }
    }

    /// wrk for `--duration` seconds with `--wrk-threads` threads (at most one per connection)
    /// and 1 (sequential-small) or `--concurrency` (concurrent-small) connections. Its own
    /// measurement: requests and Requests/sec as it prints them (its startup is not timed),
    /// and with `--latency` its latency distribution's 50 % and 99 %. Non-2xx/3xx responses
    /// and socket errors count as errors; bodies are not checked (wrk does not report them).
    private func wrk(_ url: URL, into report: inout ChildReport) throws -> ToolRun {
        let wrk = try ToolProcess.locate("wrk")
        let connections = benchCase == .sequentialSmall ? 1 : concurrency
        let threads = max(1, min(wrkThreads, connections))
        let run = try ToolProcess.run(
            wrk,
            ["-t\(threads)", "-c\(connections)", "-d\(Int(duration.rounded()))s"] + (latency ? ["--latency"] : [])
                + (wrkTimeout.map { ["--timeout", "\(Int($0.rounded(.up)))s"] } ?? [])
                + [url.absoluteString],
            killAfter: duration + 30)
        guard let result = WrkOutput(run.output) else {
            fail(&report, "cannot read wrk's output: \(run.output.suffix(300))")
            return run
        }
        report.requests = result.requests
        if latency {
            report.latencyP50Micros = result.latencyMicros[50]
            report.latencyP99Micros = result.latencyMicros[99]
            if result.latencyMicros[50] == nil || result.latencyMicros[99] == nil {
                fail(&report, "wrk printed no latency distribution")
            }
        }
        report.seconds = result.requestsPerSecond > 0 ? Double(result.requests) / result.requestsPerSecond : run.seconds
        if result.non2xx > 0 { fail(&report, "\(result.non2xx) non-2xx/3xx responses", count: result.non2xx) }
        if result.socketErrors > 0 { fail(&report, "socket errors: \(result.socketErrorText)", count: result.socketErrors) }
        return run
    }

    private func fail(_ report: inout ChildReport, _ text: String, count: Int = 1) {
        report.errors += count
        if report.errorSamples.count < 5 { report.errorSamples.append(text) }
    }

    /// One `-w` line per transfer: status, connections opened, bytes down, bytes up.
    struct CurlTransfer {
        var status: Int
        var connects: Int
        var downloaded: Int64
        var uploaded: Int64
    }

    static func curlTransfers(_ output: String) -> [CurlTransfer] {
        output.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: " ")
            guard fields.count == 4, let status = Int(fields[0]), let connects = Int(fields[1]),
                let downloaded = Int64(fields[2]), let uploaded = Int64(fields[3])
            else { return nil }
            return CurlTransfer(status: status, connects: connects, downloaded: downloaded, uploaded: uploaded)
        }
    }
}

/// What wrk 4 prints at the end of a run:
/// `  30993 requests in 1.01s, 15.78MB read`, `  Non-2xx or 3xx responses: 12`,
/// `  Socket errors: connect 0, read 1, write 0, timeout 0`, `Requests/sec:  30790.49`, and
/// with `--latency` a `  Latency Distribution` of lines such as `     99%    1.20ms`.
struct WrkOutput {
    var requests: Int
    var requestsPerSecond: Double
    var non2xx = 0
    var socketErrors = 0
    var socketErrorText = ""
    /// The latency distribution by percentile (50, 75, 90, 99), µs; empty without `--latency`.
    var latencyMicros: [Int: Double] = [:]

    init?(_ text: String) {
        var requests: Int?
        var rate: Double?
        for rawLine in text.split(separator: "\n") {
            let line = rawLine.trimmingCharacters(in: .whitespaces)
            let words = line.split(separator: " ")
            if words.count >= 3, words[1] == "requests", words[2] == "in", let count = Int(words[0]) {
                requests = count
            } else if line.hasPrefix("Requests/sec:") {
                rate = words.last.flatMap { Double($0) }
            } else if line.hasPrefix("Non-2xx or 3xx responses:") {
                non2xx = words.last.flatMap { Int($0) } ?? 0
            } else if words.count == 2, words[0].hasSuffix("%"), let percentile = Int(words[0].dropLast()),
                let micros = Self.micros(String(words[1]))
            {
                latencyMicros[percentile] = micros
            } else if line.hasPrefix("Socket errors:") {
                socketErrorText = String(line.dropFirst("Socket errors:".count)).trimmingCharacters(in: .whitespaces)
                socketErrors = words.compactMap { Int($0.trimmingCharacters(in: CharacterSet(charactersIn: ","))) }.reduce(0, +)
            }
        }
        guard let requests, let rate else { return nil }
        self.requests = requests
        self.requestsPerSecond = rate
    }

    /// A duration as wrk prints it (`635.91us`, `1.20ms`, `2.01s`, `1.50m`), in µs.
    static func micros(_ text: String) -> Double? {
        let units: [(suffix: String, micros: Double)] = [("us", 1), ("ms", 1_000), ("s", 1_000_000), ("m", 60_000_000), ("h", 3_600_000_000)]
        for unit in units where text.hasSuffix(unit.suffix) {
            guard let number = Double(text.dropLast(unit.suffix.count)) else { continue }
            return number * unit.micros
        }
        return nil
    }
}
