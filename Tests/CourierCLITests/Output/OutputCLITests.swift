import CourierTestServer
import Foundation
import Testing

/// --print, --pretty and --verbose: what reaches stdout.
@Suite("courier output")
struct OutputCLITests {
    @Test("piped, the default is the response body alone, as the server sent it")
    func defaultPiped() async throws {
        let server = try await TestServer.start()
        defer { Task { try await server.shutdown() } }
        let run = try await CourierProcess.run([server.baseURL.absoluteString + "/bytes/64?seed=7"])
        #expect(run.status == 0, "\(run)")
        let direct = try await CourierProcess.run(["--print", "b", server.baseURL.absoluteString + "/bytes/64?seed=7"])
        #expect(run.stdout.count == 64 && run.stdout == direct.stdout)
    }

    @Test("--print letters choose request/response heads and bodies")
    func printLetters() async throws {
        let server = try await TestServer.start()
        defer { Task { try await server.shutdown() } }
        let url = server.baseURL.absoluteString + "/post"
        let heads = try await CourierProcess.run(["--print", "Hh", url, "a=1", "X-Trace:7"])
        #expect(heads.status == 0, "\(heads)")
        #expect(heads.output.hasPrefix("POST /post HTTP/1.1\n"), "\(heads)")
        #expect(heads.output.contains("\nX-Trace: 7\n"), "\(heads)")
        #expect(heads.output.contains("\nHTTP/1.1 200 OK\n"), "\(heads)")
        #expect(!heads.output.contains(#"{"a":"1"}"#), "request body not asked for: \(heads)")
        #expect(!heads.output.contains("\"origin\""), "response body not asked for: \(heads)")

        let bodies = try await CourierProcess.run(["--print", "B", url, "a=1"])
        #expect(bodies.output == "{\"a\":\"1\"}\n\n", "\(bodies)")

        let headOnly = try await CourierProcess.run(["-p", "h", url, "a=1"])
        #expect(headOnly.output.hasPrefix("HTTP/1.1 200 OK\n") && headOnly.output.hasSuffix("\n\n"), "\(headOnly)")
        #expect(headOnly.output.contains("Content-Type: application/json"), "\(headOnly)")

        let bad = try await CourierProcess.run(["--print", "x", url])
        #expect(bad.status == 2 && bad.errors.contains("--print"), "\(bad)")
    }

    @Test("--pretty format indents JSON (4 spaces, server's key order); none leaves it as sent; no colour when piped")
    func pretty() async throws {
        let server = try await TestServer.start()
        defer { Task { try await server.shutdown() } }
        let url = server.baseURL.absoluteString + "/json"
        let none = try await CourierProcess.run(["--pretty", "none", url])
        let raw = try await CourierProcess.run(["--print", "b", url])
        #expect(none.stdout == raw.stdout)
        let formatted = try await CourierProcess.run(["--pretty", "format", url])
        #expect(formatted.status == 0, "\(formatted)")
        #expect(formatted.output.hasPrefix("{\n    \"slideshow\": {\n        \"author\": "), "\(formatted)")
        #expect(!formatted.output.contains("\u{1B}["))
        let colored = try await CourierProcess.run(["--pretty", "all", url])
        #expect(colored.output.contains("\u{1B}[34m\"slideshow\"\u{1B}[0m"), "\(colored)")
    }

    @Test("--verbose prints the request, the response and the timings")
    func verbose() async throws {
        let server = try await TestServer.start()
        defer { Task { try await server.shutdown() } }
        let run = try await CourierProcess.run(["-v", server.baseURL.absoluteString + "/post", "hello=world"])
        #expect(run.status == 0, "\(run)")
        #expect(run.output.hasPrefix("POST /post HTTP/1.1\n"), "\(run)")
        #expect(run.output.contains("{\"hello\":\"world\"}\n\nHTTP/1.1 200 OK\n"), "\(run)")
        for phase in ["Timings (", "\nDNS ", "\nconnect ", "\nTLS ", "\nrequest ", "\nwait ", "\ndownload ", "\ntotal "] {
            #expect(run.output.contains(phase), "\(phase): \(run)")
        }
    }

    @Test("binary bodies are written raw when piped")
    func binaryPiped() async throws {
        let server = try await TestServer.start()
        defer { Task { try await server.shutdown() } }
        let run = try await CourierProcess.run([server.baseURL.absoluteString + "/image/png"])
        #expect(run.status == 0, "\(run)")
        #expect(run.stdout.prefix(8) == Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]))
    }
}
