import ArgumentParser
import BenchSupport
import Foundation

/// `courier-ws-bench run` (the default): starts the echo server in its own process, then runs
/// every selected client on every selected case, round by round, each measurement in a child
/// process, and prints the table.
struct Run: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Measure Courier's WebSocket client against websocket-kit and Hummingbird, interleaved."
    )

    @Option(help: "Comma-separated cases, or all: echo-1-32b, echo-64-32b, echo-1-64k, echo-64-64k, open-tls, open-h2.")
    var cases = "all"
    @Option(
        help: "Comma-separated clients, or all (the default four and courier-engine-loop, courier-session-loop).")
    var clients = "courier-engine,courier-session,websocket-kit,hummingbird"
    @Option(help: "Scale every case's operation count (0.1 for a smoke run).")
    var scale = 1.0
    @OptionGroup var roundOptions: RoundOptions
    @Option(help: "A child that runs longer than this many seconds is reported as hung.")
    var timeout: Double = 300
    @Option(help: "Where the server writes its test CA's root certificate.")
    var scratch = "/tmp/courier-ws-bench"
    @Option(help: "Write the results as JSON to this file.")
    var json: String?

    func validate() throws {
        guard scale > 0 else { throw ValidationError("--scale must be positive") }
    }

    func run() async throws {
        let caseList = try parseList(cases, as: WSCase.self)
        let clientList = try parseList(clients, as: WSClientKind.self)
        let server = try EchoServerProcess(scratch: scratch)
        log("courier-ws-bench: echo server in process \(server.pid): \(server.ready.echoURL), \(server.ready.tlsEchoURL)")
        log("clients: \(clientList.map(\.rawValue).joined(separator: ", ")); rounds: \(roundOptions.rounds); scale: \(scale); cores: \(Int(MachineCPU.cores)) (nothing pinned)")

        var summaries: [CaseSummary] = []
        for benchCase in caseList {
            summaries.append(await measure(benchCase, clients: clientList, server: server))
        }
        server.stop()

        let report = WSReport(summaries: summaries)
        print(report.table())
        if let json {
            try report.json().write(to: URL(fileURLWithPath: json))
            log("wrote \(json)")
        }
        if report.hasProblems { throw ExitCode(1) }
    }

    /// Every client on `benchCase`, interleaved round by round.
    private func measure(_ benchCase: WSCase, clients: [WSClientKind], server: EchoServerProcess) async -> CaseSummary {
        let url = benchCase.usesTLS ? server.ready.tlsEchoURL : server.ready.echoURL
        log("== \(benchCase.rawValue): \(benchCase.operations(scale: scale)) \(benchCase.usesTLS ? "openings" : "round trips") per run, \(url)")
        let rounds = await measureRounds(roundOptions, companions: [server.pid]) {
            var round: [WSClientKind: Measurement] = [:]
            for client in clients where client.supports(benchCase) {
                round[client] = await runChild(client, benchCase, url: url, server: server)
            }
            return round
        } describe: { round in
            let measurements = clients.compactMap { round[$0] }
            return RoundLog(
                entries: measurements.map { measurement in
                    "\(measurement.client.rawValue) \(formatValue(measurement.value))"
                        + (measurement.problems.isEmpty ? "" : " (PROBLEM)")
                },
                suffix: " \(benchCase.unit)",
                problems: measurements.flatMap { measurement in
                    measurement.problems.map { "\(measurement.client.rawValue): \($0)" }
                })
        }
        return CaseSummary(benchCase: benchCase, url: url, rounds: rounds, clients: clients)
    }

    /// One measurement: a `run-one` child, with the server's counters and CPU around it.
    private func runChild(_ client: WSClientKind, _ benchCase: WSCase, url: String, server: EchoServerProcess) async -> Measurement {
        var arguments = [
            "run-one", "--client", client.rawValue, "--case", benchCase.rawValue, "--url", url,
            "--scale", String(scale), "--timeout", String(timeout),
        ]
        if benchCase.usesTLS { arguments += ["--ca", server.ready.caPEMPath] }
        let before = try? server.stats()
        let cpuBefore = server.cpuSeconds
        let (report, problems) = await runChildReport(ChildReport.self, arguments, killAfter: timeout + 30)
        let after = try? server.stats()
        return Measurement(
            client: client, benchCase: benchCase, report: report, childProblems: problems,
            server: before, after, serverCPUSeconds: server.cpuSeconds - cpuBefore)
    }
}
