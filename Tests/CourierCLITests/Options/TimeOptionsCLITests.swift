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

    /// A server or proxy that accepts and never says a word: only --max-time can end the call
    /// early (the connect timeout is 30 s). It must, naming the step it was in.
    @Test(
        "--max-time bounds the connection setup: a silent TLS server, HTTP proxy or SOCKS5 proxy",
        arguments: [
            (proxyScheme: nil as String?, url: "https://127.0.0.1:PORT/get", step: "during the TLS handshake"),
            (proxyScheme: "http", url: "https://127.0.0.1:9/get", step: "during the proxy handshake"),
            (proxyScheme: "socks5h", url: "http://127.0.0.1:9/get", step: "during the proxy handshake"),
        ])
    func maxTimeBoundsTheConnectionSetup(proxyScheme: String?, url: String, step: String) async throws {
        let silent = try await HostileServer.start(HostileScript([.stall]))
        defer { Task { try await silent.shutdown() } }
        var arguments = ["--max-time", "1"]
        if let proxyScheme { arguments += ["--proxy", "\(proxyScheme)://127.0.0.1:\(silent.port)"] }
        arguments.append(url.replacingOccurrences(of: "PORT", with: "\(silent.port)"))
        let started = ContinuousClock.now
        let run = try await CourierProcess.run(arguments)
        let elapsed = ContinuousClock.now - started
        #expect(run.status == 2, "\(run)")
        #expect(run.errors.hasPrefix("courier: error: request timed out (--max-time 1) \(step)"), "\(run)")
        #expect(elapsed < .seconds(10), "ended by --max-time, not the 30 s connect timeout: \(elapsed)")
    }

    /// Each redirect answers after 400 ms, for ever: every hop is inside --max-time, twenty of
    /// them are not. One deadline for the whole chain, with the session following (--follow)
    /// or the command following each hop itself (--all --follow).
    @Test("--max-time is one deadline across --follow's redirects", arguments: [["--follow"], ["--all", "--follow"]])
    func maxTimeSpansRedirects(follow: [String]) async throws {
        let script = HostileScript(
            [.readHead, .sleep(milliseconds: 400), HostileStep.write("HTTP/1.1 302 Found\r\nLocation: /next\r\nContent-Length: 0\r\n\r\n")],
            afterwards: .repeatSteps)
        let server = try await HostileServer.start(script)
        defer { Task { try await server.shutdown() } }
        let started = ContinuousClock.now
        let run = try await CourierProcess.run(follow + ["--max-redirects", "20", "--max-time", "1.5", server.baseURL.absoluteString])
        let elapsed = ContinuousClock.now - started
        #expect(run.status == 2, "\(run)")
        #expect(run.errors.hasPrefix("courier: error: request timed out (--max-time 1.5)"), "\(run)")
        #expect(run.errors.contains("on redirect "), "\(run)")
        #expect(elapsed < .seconds(6), "20 hops of 400 ms would take 8 s: \(elapsed)")
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
