import ArgumentParser
import Courier
import Dispatch
import Foundation
import Synchronization

/// `courier reachability [HOST|ADDRESS] [--watch] [--json]`: AFNetworkReachabilityManager from
/// the shell.
struct ReachabilityCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reachability",
        abstract: "Say whether a host, an address or the network at large is reachable; --watch follows changes.",
        discussion: """
            Without a target, watches the default route (the network at large). A target that is \
            an IPv4 or IPv6 address is looked up as is; anything else is a host name, resolved \
            when the watch starts and again when routes change. Each line gives the status \
            (Not Reachable, Reachable via WiFi, Reachable via WWAN), the interface the path leaves \
            by and the reachability flags; --json prints one object per line with "status" \
            (unknown, notReachable, reachableViaWWAN, reachableViaWiFi), "interface" (a name or \
            null) and "flags" (an array of flag names). Exit status without --watch: 0 reachable, \
            1 not reachable; --watch prints one line per change until Ctrl-C and exits 0.
            """,
        helpNames: [.short, .long]  // as `serve`: the root's -h is HTTPie's --headers
    )

    @Argument(help: "A host name or an IP address (default: the default route).")
    var target: String?

    @Flag(help: "Print the status once, then one line per change until Ctrl-C.")
    var watch = false

    @Flag(help: "One JSON object per line: {\"status\": ..., \"interface\": ..., \"flags\": [...]}.")
    var json = false

    /// How long the first status is waited for without --watch (a host name's resolution is
    /// bounded at 10 s).
    static let firstStatusBound: Duration = .seconds(20)

    func validate() throws {
        _ = try makeManager()
    }

    func run() async throws {
        let manager = try makeManager()
        let json = self.json
        let first = FirstStatus()
        manager.setReachabilityStatusChangeBlock { [weak manager] status in
            // The block runs after status, flags and interface were published together.
            let line = Self.line(status: status, flags: manager?.flags ?? [], interface: manager?.interfaceName, json: json)
            StandardStreams.writeOutput(Data((line + "\n").utf8))
            first.resolve(status)
        }
        if watch {
            let signals = Self.exitOnSignals()
            manager.startMonitoring()
            // Until a signal ends the process (the loop reads `signals`, which keeps the signal
            // sources alive).
            while !signals.isEmpty { try await Task.sleep(for: .seconds(3600)) }
        }
        manager.startMonitoring()
        let status = await first.value(within: Self.firstStatusBound)
        manager.stopMonitoring()
        if status == nil {
            let line = Self.line(status: .unknown, flags: [], interface: nil, json: json)
            StandardStreams.writeOutput(Data((line + "\n").utf8))
        }
        let reachable = status == .reachableViaWiFi || status == .reachableViaWWAN
        if !reachable { throw ExitCode(ExitStatus.error.rawValue) }
    }

    private func makeManager() throws -> NetworkReachabilityManager {
        guard let target, !target.isEmpty else { return NetworkReachabilityManager() }
        if let manager = try? NetworkReachabilityManager(address: target) { return manager }
        guard let manager = NetworkReachabilityManager(domain: target) else {
            throw ValidationError("'\(target)' is neither an IP address nor a valid host name.")
        }
        return manager
    }

    /// One output line: `Reachable via WiFi  interface: eth0  flags: reachable, isDirect`, or
    /// the JSON object.
    static func line(
        status: NetworkReachabilityManager.Status, flags: NetworkReachabilityManager.ReachabilityFlags,
        interface: String?, json: Bool
    ) -> String {
        if json {
            let names = flags.names.map { "\"\($0)\"" }.joined(separator: ",")
            let interfaceValue = interface.map(jsonString) ?? "null"
            return "{\"status\":\"\(status.name)\",\"interface\":\(interfaceValue),\"flags\":[\(names)]}"
        }
        var line = status.description
        if let interface { line += "  interface: \(interface)" }
        if !flags.isEmpty { line += "  flags: \(flags.names.joined(separator: ", "))" }
        return line
    }

    /// A JSON string literal for `text`.
    static func jsonString(_ text: String) -> String {
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case _ where scalar.value < 0x20:
                result += "\\u" + String(repeating: "0", count: 4 - String(scalar.value, radix: 16).count)
                    + String(scalar.value, radix: 16)
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result + "\""
    }

    /// SIGINT and SIGTERM end a watch with status 0.
    private static func exitOnSignals() -> [any DispatchSourceSignal] {
        let queue = DispatchQueue(label: "courier.reachability.signals")
        return [SIGINT, SIGTERM].map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler { Foundation.exit(ExitStatus.success.rawValue) }
            source.resume()
            return source
        }
    }
}

/// The first status delivered, awaited with a bound.
private final class FirstStatus: Sendable {
    private struct State {
        var status: NetworkReachabilityManager.Status?
        var isOver = false
        var waiter: CheckedContinuation<Void, Never>?
    }

    private let state = Mutex(State())

    func resolve(_ status: NetworkReachabilityManager.Status) {
        end { state in
            if state.status == nil && !state.isOver { state.status = status }
        }
    }

    /// The first status, or nil when none came within `bound`.
    func value(within bound: Duration) async -> NetworkReachabilityManager.Status? {
        let timer = Task {
            try await Task.sleep(for: bound)
            end { _ in }
        }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ready = state.withLock { state -> Bool in
                guard !state.isOver else { return true }
                state.waiter = continuation
                return false
            }
            if ready { continuation.resume() }
        }
        timer.cancel()
        return state.withLock { $0.status }
    }

    /// Applies `change`, marks the wait over and wakes the waiter.
    private func end(_ change: (inout State) -> Void) {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            change(&state)
            state.isOver = true
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
    }
}
