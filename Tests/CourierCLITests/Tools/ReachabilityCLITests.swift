#if os(Linux)  // network namespaces, rtnetlink and ip(8) are Linux's
import Dispatch
import CourierTestServer
import Foundation
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `courier reachability` end to end: the built binary runs inside a network namespace the test
/// made (`ip netns exec`), so the whole process — its netlink socket, its resolver — lives
/// there, and the test changes that namespace's links and routes with `ip`.
@Suite(.serialized) struct ReachabilityCLITests {
    @Test func oneShotExitsZeroWhenReachableAndOneWhenNot() async throws {
        let namespace = try CLINetworkNamespace.make()
        defer { namespace.remove() }
        let unreachable = try await namespace.runCourier(["reachability", "--json"])
        #expect(unreachable.status == 1, "\(unreachable)")
        #expect(unreachable.output == "{\"status\":\"notReachable\",\"interface\":null,\"flags\":[]}\n")

        namespace.addVeth(address: "10.200.0.1/24")
        namespace.ip("route", "add", "default", "dev", "v0")
        let reachable = try await namespace.runCourier(["reachability", "--json"])
        #expect(reachable.status == 0, "\(reachable)")
        #expect(reachable.output == "{\"status\":\"reachableViaWiFi\",\"interface\":\"v0\",\"flags\":[\"reachable\",\"isDirect\"]}\n")

        // The namespace's own address is delivered through lo, which is still down (a connect()
        // to it times out then): not reachable, until lo is up.
        let ownWhileLoDown = try await namespace.runCourier(["reachability", "10.200.0.1"])
        #expect(ownWhileLoDown.status == 1, "\(ownWhileLoDown)")
        #expect(ownWhileLoDown.output == "Not Reachable\n")
        namespace.ip("link", "set", "lo", "up")
        let own = try await namespace.runCourier(["reachability", "10.200.0.1"])
        #expect(own.status == 0, "\(own)")
        #expect(own.output == "Reachable via WiFi  interface: lo  flags: reachable, isLocalAddress, isDirect\n")
    }

    @Test func aNameThatResolvesIntoTheNamespace() async throws {
        let namespace = try CLINetworkNamespace.make()
        defer { namespace.remove() }
        // `ip netns exec` mounts /etc/netns/NAME/hosts over /etc/hosts for the command.
        try namespace.writeHosts("127.0.0.1 localhost\n10.200.0.9 courier-reach.test\n")
        let before = try await namespace.runCourier(["reachability", "courier-reach.test", "--json"])
        #expect(before.status == 1, "\(before)")
        #expect(before.output.contains("\"notReachable\""))
        namespace.addVeth(address: "10.200.0.1/24")
        let after = try await namespace.runCourier(["reachability", "courier-reach.test", "--json"])
        #expect(after.status == 0, "\(after)")
        #expect(after.output == "{\"status\":\"reachableViaWiFi\",\"interface\":\"v0\",\"flags\":[\"reachable\",\"isDirect\"]}\n")
        let unknownName = try await namespace.runCourier(["reachability", "no-such-host.courier-reach.test", "--json"])
        #expect(unknownName.status == 1, "\(unknownName)")
    }

    @Test func watchPrintsOneLinePerChangeUntilTerminated() async throws {
        let namespace = try CLINetworkNamespace.make()
        defer { namespace.remove() }
        let watch = try namespace.startCourier(["reachability", "--watch", "--json"])
        let notReachable = "{\"status\":\"notReachable\",\"interface\":null,\"flags\":[]}"
        let viaV0 = "{\"status\":\"reachableViaWiFi\",\"interface\":\"v0\",\"flags\":[\"reachable\",\"isDirect\"]}"
        try await watch.waitForLines(1)
        namespace.addVeth(address: "10.200.0.1/24")
        namespace.ip("route", "add", "default", "dev", "v0")
        try await watch.waitForLines(2)
        namespace.ip("link", "set", "v1", "down")
        try await watch.waitForLines(3)
        namespace.ip("link", "set", "v1", "up")
        try await watch.waitForLines(4)
        namespace.ip("route", "del", "default")
        try await watch.waitForLines(5)
        let status = await watch.terminate()
        #expect(status == 0)
        #expect(watch.lines == [notReachable, viaV0, notReachable, viaV0, notReachable], "\(watch.lines)")
    }

    @Test func anInvalidTargetIsAUsageError() async throws {
        let run = try await CourierProcess.run(["reachability", "not a host!"])
        #expect(run.status == 2, "\(run)")
        #expect(run.errors.contains("neither an IP address nor a valid host name"))
    }
}

/// A network namespace for one test, and `courier` run inside it.
struct CLINetworkNamespace {
    let name: String

    static func make() throws -> CLINetworkNamespace {
        let name = "courier-cli-\(UUID().uuidString.prefix(8).lowercased())"
        let result = run(ipPath, ["netns", "add", name])
        guard result.status == 0 else {
            throw CLITestFailure(
                "network namespaces are not permitted here (`ip netns add` exited \(result.status): \(result.output)). "
                    + "The reachability CLI tests need root and iproute2 (scripts/install-dependencies.sh installs it).")
        }
        return CLINetworkNamespace(name: name)
    }

    static let ipPath =
        ["/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"].first { FileManager.default.isExecutableFile(atPath: $0) }
        ?? "/usr/sbin/ip"

    func ip(_ arguments: String..., sourceLocation: SourceLocation = #_sourceLocation) {
        let result = Self.run(Self.ipPath, ["-n", name] + arguments)
        #expect(result.status == 0, "ip \(arguments.joined(separator: " ")): \(result.output)", sourceLocation: sourceLocation)
    }

    /// v0 (with `address`) and its peer v1, both up.
    func addVeth(address: String) {
        ip("link", "add", "v0", "type", "veth", "peer", "name", "v1")
        ip("addr", "add", address, "dev", "v0")
        ip("link", "set", "v1", "up")
        ip("link", "set", "v0", "up")
    }

    private var etcDirectory: String { "/etc/netns/\(name)" }

    func writeHosts(_ text: String) throws {
        try FileManager.default.createDirectory(atPath: etcDirectory, withIntermediateDirectories: true)
        try Data(text.utf8).write(to: URL(fileURLWithPath: etcDirectory + "/hosts"))
    }

    func remove() {
        _ = Self.run(Self.ipPath, ["netns", "del", name])
        try? FileManager.default.removeItem(atPath: etcDirectory)
    }

    /// `ip netns exec NAME courier arguments...` to completion (hang bound 60 s).
    func runCourier(_ arguments: [String]) async throws -> CourierRun {
        let child = try startCourier(arguments)
        let status = await child.waitForExit()
        return CourierRun(status: status, stdout: Data(child.output.utf8), stderr: Data(child.errors.utf8))
    }

    func startCourier(_ arguments: [String]) throws -> NamespacedChild {
        try NamespacedChild(Self.ipPath, ["netns", "exec", name, CourierBinary.url.path] + arguments)
    }

    static func run(_ path: String, _ arguments: [String]) -> (status: Int32, output: String) {
        do {
            let result = try ProcessLauncher.runToEnd(path, arguments, includingStandardError: true)
            return (result.status, String(decoding: result.output, as: UTF8.self))
        } catch {
            return (127, "\(error)")
        }
    }
}

/// A child whose stdout and stderr are collected as they arrive.
final class NamespacedChild: Sendable {
    private let process: Process
    private let out = Mutex(Data())
    private let err = Mutex(Data())
    /// Readers that reached end of file (2: all output is in).
    private let finishedReaders = Mutex(0)

    init(_ path: String, _ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        process.standardInput = FileHandle.nullDevice
        let outPipe = Pipe()
        let errPipe = Pipe()
        process.standardOutput = outPipe
        process.standardError = errPipe
        self.process = process
        try ProcessLauncher.run(process)
        Thread.detachNewThread { [self] in
            while case let data = outPipe.fileHandleForReading.availableData, !data.isEmpty { out.withLock { $0 += data } }
            finishedReaders.withLock { $0 += 1 }
        }
        Thread.detachNewThread { [self] in
            while case let data = errPipe.fileHandleForReading.availableData, !data.isEmpty { err.withLock { $0 += data } }
            finishedReaders.withLock { $0 += 1 }
        }
    }

    var output: String { String(decoding: out.withLock { $0 }, as: UTF8.self) }
    var errors: String { String(decoding: err.withLock { $0 }, as: UTF8.self) }
    /// The complete lines printed so far.
    var lines: [String] {
        output.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
    }

    /// Waits (hang bound 20 s) until `count` complete lines are out.
    func waitForLines(_ count: Int, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let end = ContinuousClock.now + .seconds(20)
        while ContinuousClock.now < end {
            if lines.count >= count { return }
            try await Task.sleep(for: .milliseconds(10))
        }
        Issue.record("expected \(count) lines within 20 s: \(lines); stderr: \(errors)", sourceLocation: sourceLocation)
    }

    /// SIGTERM, then the exit status.
    func terminate() async -> Int32 {
        kill(process.processIdentifier, SIGTERM)
        return await waitForExit()
    }

    /// Waits for the exit (SIGKILL after 60 s) and returns the status; the output is complete after.
    func waitForExit() async -> Int32 {
        let process = self.process
        let watchdog = DispatchWorkItem { kill(process.processIdentifier, SIGKILL) }
        DispatchQueue.global().asyncAfter(deadline: .now() + 60, execute: watchdog)
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().async {
                process.waitUntilExit()
                continuation.resume()
            }
        }
        watchdog.cancel()
        // The readers may still be draining the pipes: wait for both to reach end of file.
        let end = ContinuousClock.now + .seconds(20)
        while ContinuousClock.now < end, finishedReaders.withLock({ $0 }) < 2 {
            try? await Task.sleep(for: .milliseconds(10))
        }
        return process.terminationStatus
    }
}
#endif
