import ArgumentParser
import BenchSupport
import Foundation

/// `courier-bench scaling`: small GETs against nginx with more and more requests in flight
/// (1 … 4,096 by default), every selected client at every step, each measurement in a
/// `run-one` child; a table of the cost per step, a CSV and an SVG plot.
struct Scaling: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scaling",
        abstract: "Small GETs against nginx at 1 … 4,096 in flight: req/s, CPU per request, p50/p99 latency and peak RSS per step."
    )

    @Option(help: "Comma-separated numbers of requests in flight (and connections per host the clients may open).")
    var steps = "1,16,64,256,1024,4096"
    @Option(help: "Comma-separated clients that run concurrent-small: courier-engine, courier-session, courier-session-typed, async-http-client, urlsession, …, and the reference wrk.")
    var clients = "courier-engine,courier-session-typed,async-http-client,wrk"
    @Option(help: "nginx's base URL (Benchmarks/nginx/setup.sh start); the clients GET its /json.")
    var url = "http://127.0.0.1:8089"
    @Option(help: "Measured requests per step and client (at least --requests-per-connection times the step).")
    var requestsPerStep = 10_000
    @Option(help: "Measured requests per connection at least, so that large steps are not all connection setup.")
    var requestsPerConnection = 8
    @Option(help: "Unmeasured requests before each measurement, at least one per connection (they open the pool).")
    var warmup = 256
    @Option(help: "Seconds each wrk run lasts.")
    var wrkDuration: Double = 5
    @Option(help: "wrk's threads (-t).")
    var wrkThreads = 2
    @Option(help: "wrk's --timeout in seconds (its default of 2 s drops the slowest answers at thousands of connections from its latencies and counts them as errors).")
    var wrkTimeout: Double = 30
    @Option(help: "A child that runs longer than this many seconds is reported as hung.")
    var timeout: Double = 300
    @Option(help: "Write the table's numbers as CSV to this file.")
    var csv: String?
    @Option(help: "Write the curves (req/s, CPU per request, peak RSS against requests in flight) as SVG to this file.")
    var svg: String?
    @OptionGroup var roundOptions: RoundOptions

    func validate() throws {
        guard requestsPerStep >= 1, requestsPerConnection >= 1, warmup >= 0 else {
            throw ValidationError("--requests-per-step and --requests-per-connection must be at least 1, --warmup at least 0")
        }
    }

    func run() async throws {
        let stepList = try Self.parseSteps(steps)
        let clientList = try parseList(clients, as: ClientKind.self)
        for client in clientList where !client.supports(.concurrentSmall) {
            throw ValidationError("\(client.rawValue) does not run concurrent requests")
        }
        guard let base = URL(string: url) else { throw ValidationError("--url \(url) is not a URL") }
        let jsonURL = base.appendingPathComponent("json")
        guard let probe = PlainHTTP.get(jsonURL), probe.status == 200 else {
            throw ValidationError("nginx does not answer at \(jsonURL.absoluteString); run Benchmarks/nginx/setup.sh start")
        }
        let bodyBytes = Int64(probe.body.count)

        // Children inherit the limit (and raise it again themselves when run alone).
        let largest = UInt64(stepList.max() ?? 1)
        let limit = OpenFileLimit.raise(to: largest * 2 + 1_024)
        var notes: [String] = []
        if limit < largest + 64 {
            notes.append("RLIMIT_NOFILE is \(limit) (hard limit reached): steps above ~\(limit > 64 ? limit - 64 : 0) will fail to connect")
        }
        notes.append("requests per step: max(\(requestsPerStep), \(requestsPerConnection) × in flight), after max(\(warmup), in flight) unmeasured warm-up requests with the same window; wrk runs \(formatValue(wrkDuration)) s per step with -t\(wrkThreads) --timeout \(formatValue(wrkTimeout))s (its own timing, connection setup included)")
        notes.append("latency: from the call to the collected answer, per request, in a closed loop (a new request starts when one ends), as wrk measures it")

        log("courier-bench scaling: nginx \(jsonURL.absoluteString) (\(bodyBytes)-byte body); steps \(stepList.map(String.init).joined(separator: ", ")); clients \(clientList.map(\.rawValue).joined(separator: ", ")); rounds \(roundOptions.rounds); RLIMIT_NOFILE \(limit); cores \(Int(MachineCPU.cores)) (nothing pinned)")

        let counter = ConnectionCounter.nginx(base)
        var measured: [ScalingStep] = []
        for inFlight in stepList {
            let requests = requestCount(inFlight)
            log("== \(inFlight) in flight: \(requests) requests per client")
            let rounds = await measureRounds(roundOptions) {
                var round: [ClientKind: ScalingRun] = [:]
                for client in clientList {
                    round[client] = await runChild(client, inFlight: inFlight, requests: requests, url: jsonURL, bodyBytes: bodyBytes, counter: counter)
                }
                return round
            } describe: { round in
                let runs = clientList.compactMap { round[$0] }
                return RoundLog(
                    entries: runs.map { run in
                        "\(run.client.rawValue) \(formatValue(run.requestsPerSecond)) req/s" + (run.problems.isEmpty ? "" : " (PROBLEM)")
                    },
                    problems: runs.flatMap { run in run.problems.map { "\(run.client.rawValue): \($0)" } }
                )
            }
            measured.append(ScalingStep(inFlight: inFlight, requests: requests, rounds: rounds))
        }

        let report = ScalingReport(steps: measured, clients: clientList, notes: notes)
        let command = (["courier-bench"] + CommandLine.arguments.dropFirst()).joined(separator: " ")
        print(report.text(command: command))
        if let csv {
            try report.csv().write(toFile: csv, atomically: true, encoding: .utf8)
            log("wrote \(csv)")
        }
        if let svg {
            try ScalingPlot(report: report).svg().write(toFile: svg, atomically: true, encoding: .utf8)
            log("wrote \(svg)")
        }
        if report.hasProblems { throw ExitCode(1) }
    }

    /// Measured requests at `inFlight`.
    func requestCount(_ inFlight: Int) -> Int {
        max(requestsPerStep, requestsPerConnection * inFlight)
    }

    /// "1,16,64": positive, distinct, in ascending order.
    static func parseSteps(_ text: String) throws -> [Int] {
        let values = try text.split(separator: ",").map { part -> Int in
            let trimmed = part.trimmingCharacters(in: .whitespaces).replacingOccurrences(of: "_", with: "")
            guard let value = Int(trimmed), value >= 1 else {
                throw ValidationError("--steps: '\(part)' is not a positive number")
            }
            return value
        }
        guard !values.isEmpty else { throw ValidationError("--steps is empty") }
        return Array(Set(values)).sorted()
    }

    /// One client at one step in a `run-one` child, its report checked.
    func runChild(
        _ client: ClientKind, inFlight: Int, requests: Int, url: URL, bodyBytes: Int64, counter: ConnectionCounter
    ) async -> ScalingRun {
        var arguments = [
            "run-one", "--client", client.rawValue, "--case", BenchCase.concurrentSmall.rawValue,
            "--url", url.absoluteString,
            "--concurrency", String(inFlight), "--connections", String(inFlight),
            "--requests", String(requests), "--latency", "--timeout", String(timeout),
        ]
        if client == .wrk {
            arguments += ["--duration", String(wrkDuration), "--wrk-threads", String(wrkThreads), "--wrk-timeout", String(wrkTimeout)]
        } else {
            arguments += ["--warmup", String(max(warmup, inFlight))]
        }
        let before = counter.read()
        let killAfter = (client == .wrk ? wrkDuration : timeout) + 60
        let (child, childProblems) = await runChildReport(ChildReport.self, arguments, killAfter: killAfter)
        let after = counter.read()

        var run = ScalingRun(client: client, report: child, problems: childProblems)
        if let before, let after { run.connections = after - before - counter.overhead }
        guard let report = child else { return run }
        if report.timedOut { run.problems.append("HUNG: \(report.errorSamples.last ?? "")") }
        if report.errors > 0 {
            run.problems.append("\(report.errors) of \(report.requests) requests failed: \(report.errorSamples.joined(separator: "; "))")
        }
        let expected = bodyBytes * Int64(report.requests)
        if client.checksBodyBytes, report.bytes != expected {
            run.problems.append("received \(report.bytes) body bytes, expected \(expected)")
        }
        if report.latencyP50Micros == nil || report.latencyP99Micros == nil {
            run.problems.append("no latency percentiles")
        }
        return run
    }
}
