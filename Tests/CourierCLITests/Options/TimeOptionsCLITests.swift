import CourierTestServer
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `--timeout`, `--max-time` and `bench --duration`/`--timeout`: numbers from the command line
/// that become nanoseconds. Nonsense (nan, zero, negative) is exit 2 naming the option; huge
/// values (inf included) are clamped to 10⁹ s, "no limit" in practice; nothing traps.
@Suite("courier time options")
struct TimeOptionsCLITests {
    @Test("--timeout and --max-time nan, 0, -1, -inf: exit 2 naming the option; nothing is sent")
    func nonsenseValues() async throws {
        let server = try await TestServer.start()
        defer { Task { try await server.shutdown() } }
        for option in ["--timeout", "--max-time"] {
            for value in ["nan", "0", "-1", "-inf"] {
                let run = try await CourierProcess.run([option, value, server.baseURL.absoluteString + "/get"])
                #expect(run.status == 2, "\(option) \(value): \(run)")
                #expect(run.errors.hasPrefix("courier: error: \(option) "), "\(option) \(value): \(run)")
            }
        }
        #expect(server.requestsReceived == 0)
    }

    @Test("--timeout and --max-time 1e10, 1e300, inf: clamped, the request runs")
    func hugeValues() async throws {
        let server = try await TestServer.start()
        defer { Task { try await server.shutdown() } }
        for option in ["--timeout", "--max-time"] {
            for value in ["1e10", "1e300", "inf"] {
                let run = try await CourierProcess.run([option, value, server.baseURL.absoluteString + "/get"])
                #expect(run.status == 0, "\(option) \(value): \(run)")
                #expect((try? run.json()["url"] as? String)?.hasSuffix("/get") == true, "\(option) \(value): \(run)")
            }
        }
    }

    @Test("--max-time: a body trickling in past the total deadline is exit 2 naming --max-time")
    func maxTimeDeadline() async throws {
        let server = try await TestServer.start()
        defer { Task { try await server.shutdown() } }
        // One byte a second for 30 s: the idle timeout (10 s) never fires, the deadline (1 s) does.
        let run = try await CourierProcess.run([
            "--timeout", "10", "--max-time", "1", server.baseURL.absoluteString + "/drip?duration=30&numbytes=30",
        ])
        #expect(run.status == 2, "\(run)")
        #expect(run.errors.hasPrefix("courier: error: request timed out (--max-time 1)"), "\(run)")
        #expect(run.errors.contains("try a larger --max-time"), "\(run)")
    }

    @Test("bench --duration and --timeout nan, 0, -1: exit 2 naming the option")
    func benchNonsense() async throws {
        for (option, value) in [("--duration", "nan"), ("--duration", "0"), ("--duration", "-1"), ("--timeout", "-1"),
            ("--timeout", "nan")]
        {
            let run = try await CourierProcess.run(["bench", option, value, "http://127.0.0.1:9/get"])
            #expect(run.status == 2, "\(option) \(value): \(run)")
            #expect(run.errors.contains(option), "\(option) \(value): \(run)")
        }
    }

    @Test("bench --timeout 1e10 runs; bench --duration 1e300 runs until interrupted instead of trapping")
    func benchHugeValues() async throws {
        let server = try await TestServer.start()
        defer { Task { try await server.shutdown() } }
        let url = server.baseURL.absoluteString + "/get"
        let counted = try await CourierProcess.run(["bench", "-n", "2", "-c", "1", "--timeout", "1e10", url])
        #expect(counted.status == 0, "\(counted)")
        let child = try CourierChild(["bench", "--duration", "1e300", "-c", "1", url])
        let started = await child.waitForOutput(containing: "courier bench GET")
        #expect(started, "\(child.output)\n\(child.errorOutput)")
        child.send(SIGINT)
        let end = await child.waitForExit()
        #expect(end.reason == .uncaughtSignal && end.status == SIGINT, "\(end) \(child.errorOutput)")
    }
}
