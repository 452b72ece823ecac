/// One client's run of one case, as its child reported it and the runner checked it.
struct Measurement: Sendable {
    var client: WSClientKind
    /// Round trips or openings per second.
    var value: Double = 0
    /// The client's CPU per timed operation, µs.
    var cpuMicrosPerOperation: Double = 0
    /// The server process's CPU over the whole child run (openings and closes included) per
    /// timed operation, µs.
    var serverCPUMicrosPerOperation: Double = 0
    var peakRSSMiB: Double = 0
    var baselineRSSMiB: Double = 0
    /// TCP connections the server accepted during the child run.
    var connections: Int?
    /// Failed checks, child errors, a crash or a hang.
    var problems: [String]
}

extension Measurement {
    /// Checks `report` against what the case had to do and the server's counters before and
    /// after the child: no errors, every echo checked, one close with 1000 per socket and no
    /// other close, one connection per socket (per the route's rule for openings).
    init(
        client: WSClientKind, benchCase: WSCase, report: ChildReport?, childProblems: [String],
        server before: ServerStats?, _ after: ServerStats?, serverCPUSeconds: Double
    ) {
        self.init(client: client, problems: childProblems)
        guard let report else { return }
        // Sockets the run opens, and echoes it checks: every socket's untimed first round trip
        // and the timed ones; an opening (the untimed first one too) makes one echo.
        let sockets: Int
        let echoes: Int
        let expectedConnections: Int
        switch benchCase.workload {
        case .echo(let count, _):
            sockets = count
            echoes = report.operations + count
            expectedConnections = count
        case .open(let route):
            sockets = report.operations + 1
            echoes = sockets
            expectedConnections = route.connections(forOpenings: sockets)
        }
        if let before, let after {
            let accepted = after.connections - before.connections
            let normal = after.normalCloses - before.normalCloses
            let other = after.otherCloses - before.otherCloses
            connections = accepted
            if accepted != expectedConnections {
                problems.append("the server accepted \(accepted) connections, expected \(expectedConnections) for \(sockets) sockets")
            }
            if normal != sockets { problems.append("the server got \(normal) closes with 1000 for \(sockets) sockets") }
            if other > 0 { problems.append("the server got \(other) closes with another code or none") }
        } else {
            problems.append("no counters from the echo server")
        }
        if report.timedOut { problems.append("HUNG: \(report.errorSamples.last ?? "")") }
        if report.errors > 0 {
            problems.append("\(report.errors) sockets or openings failed: \(report.errorSamples.joined(separator: "; "))")
        }
        if report.echoesChecked != echoes {
            problems.append("\(report.echoesChecked) echoes checked, expected \(echoes)")
        }
        let operations = Double(max(1, report.operations))
        value = report.seconds > 0 ? operations / report.seconds : 0
        cpuMicrosPerOperation = Double(report.cpuMicros) / operations
        serverCPUMicrosPerOperation = serverCPUSeconds * 1e6 / operations
        peakRSSMiB = Double(report.peakRSSKiB) / 1024
        baselineRSSMiB = Double(report.baselineRSSKiB) / 1024
    }
}
