import ArgumentParser
import BenchSupport
import Foundation

/// `courier-ws-bench run-one`: one client, one case, in this process; prints a ``ChildReport``.
/// The runner runs each measurement this way so that CPU and peak RSS are the client's alone.
struct RunOne: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run-one",
        abstract: "Run one client on one case in this process and print a JSON report (used by `run`)."
    )

    @Option(help: "courier-engine, courier-engine-loop, courier-session, courier-session-loop, websocket-kit or hummingbird.") var client: WSClientKind
    @Option(name: .customLong("case"), help: "The workload.") var benchCase: WSCase
    @Option(help: "The echo endpoint (ws:// or wss://).") var url: String
    @Option(help: "The test CA's root certificate (PEM), for wss.") var ca: String?
    @Option(help: "Scale the case's default operation count.") var scale = 1.0
    @Option(help: "Give up after this many seconds and report a hang.") var timeout: Double = 300

    func run() async throws {
        guard let url = URL(string: url) else { throw ValidationError("bad --url \(url)") }
        let baselineRSS = ResourceUsage.peakRSSKiB()
        let trust = try ca.map { try ServerTrust(pemPath: $0) }
        let route: OpeningRoute?
        if case .open(let opening) = benchCase.workload { route = opening } else { route = nil }
        let client: any EchoClient
        switch self.client {
        case .courierEngine, .courierEngineLoop:
            client = try CourierEngineEchoClient(trust: trust, route: route, onLoop: self.client == .courierEngineLoop)
        case .courierSession, .courierSessionLoop:
            client = CourierSessionEchoClient(trust: trust, route: route, onLoop: self.client == .courierSessionLoop)
        case .webSocketKit: client = WebSocketKitEchoClient(trust: trust)
        case .hummingbird: client = HummingbirdEchoClient(trust: trust)
        }

        let operations = benchCase.operations(scale: scale)
        let sockets: Int
        if case .echo(let count, _) = benchCase.workload { sockets = count } else { sockets = 1 }
        let failures = Failures()
        let tally = EchoTally()
        var report = ChildReport(
            client: self.client, benchCase: benchCase, sockets: sockets, operations: operations, echoesChecked: 0,
            errors: 0, errorSamples: [], seconds: 0, cpuMicros: 0, peakRSSKiB: 0, baselineRSSKiB: baselineRSS,
            timedOut: false
        )
        Self.startWatchdog(timeout, report: report, failures: failures, tally: tally)

        switch benchCase.workload {
        case .echo(_, let size):
            let timing = EchoTiming(sockets: sockets)
            let payload = EchoPayload(size: size)
            let roundTrips = operations / sockets
            await withTaskGroup(of: Void.self) { group in
                for socket in 0..<sockets {
                    group.addTask(executorPreference: client.taskExecutor) {
                        let script = EchoScript(payload: payload, socket: socket, roundTrips: roundTrips, timing: timing, tally: tally)
                        do {
                            try await client.run(url, script)
                        } catch {
                            timing.withdraw(socket)
                            failures.record("socket \(socket): \(error)")
                        }
                    }
                }
            }
            if let measured = timing.measured {
                report.seconds = measured.seconds
                report.cpuMicros = measured.cpuMicros
            }
        case .open:
            let payload = EchoPayload(size: 32)
            func open(_ number: Int) async {
                let script = EchoScript(payload: payload, socket: number, roundTrips: 0, timing: nil, tally: tally)
                do {
                    try await client.run(url, script)
                } catch {
                    failures.record("opening \(number): \(error)")
                }
            }
            // Untimed: the connection a route keeps open (the HTTP/2 one), then the first opening
            // (lazy setup in every client).
            let (seconds, cpuMicros) = await withTaskExecutorPreference(client.taskExecutor) {
                if let route, let priming = route.primingURL(forSocket: url) {
                    do {
                        try await client.prime(priming)
                    } catch {
                        failures.record("priming GET \(priming): \(error)")
                    }
                }
                await open(0)
                let start = ContinuousClock.now
                let before = ResourceUsage.current()
                for number in 1...operations { await open(number) }
                return ((ContinuousClock.now - start).seconds, ResourceUsage.current().cpuMicros - before.cpuMicros)
            }
            report.seconds = seconds
            report.cpuMicros = cpuMicros
        }
        await client.shutdown()

        report.echoesChecked = tally.value
        (report.errors, report.errorSamples) = failures.snapshot
        report.peakRSSKiB = ResourceUsage.peakRSSKiB()
        emitLine(report)
    }

    /// After `timeout` seconds, prints `report` marked as timed out, with what got done, and exits.
    private static func startWatchdog(_ timeout: Double, report: ChildReport, failures: Failures, tally: EchoTally) {
        Thread.detachNewThread {
            Thread.sleep(forTimeInterval: timeout)
            var report = report
            report.timedOut = true
            report.echoesChecked = tally.value
            (report.errors, report.errorSamples) = failures.snapshot
            report.errorSamples.append("timed out after \(timeout) s with \(tally.value) echoes checked")
            report.peakRSSKiB = ResourceUsage.peakRSSKiB()
            emitLine(report)
            Foundation.exit(3)
        }
    }
}
