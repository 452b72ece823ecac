import CourierTestServer
import Foundation
import Testing

/// Exit statuses and error messages: redirects, timeouts, --check-status, refused connections.
@Suite("courier exit statuses")
struct ExitStatusCLITests {
    @Test("without --follow the 302 itself is printed; with it the chain ends at /get")
    func follow() async throws {
        let server = try await TestServer.start()
        defer { Task { try await server.shutdown() } }
        let url = server.baseURL.absoluteString + "/redirect/3"
        let plain = try await CourierProcess.run(["--print", "h", url])
        #expect(plain.status == 0, "\(plain)")
        #expect(plain.output.hasPrefix("HTTP/1.1 302 Found\n"), "\(plain)")
        #expect(plain.output.contains("Location: /relative-redirect/2"), "\(plain)")
        let followed = try await CourierProcess.run(["--follow", url])
        #expect(followed.status == 0, "\(followed)")
        #expect((try followed.json()["url"] as? String)?.hasSuffix("/get") == true, "\(followed)")
    }

    @Test(
        "--follow to file:, ftp: or data: is an unfollowable redirect: exit 1 and its own message",
        arguments: ["file:///etc/passwd", "ftp://127.0.0.1/x", "data:text/plain,hi"])
    func unfollowableRedirect(location: String) async throws {
        let server = try await TestServer.start()
        defer { Task { try await server.shutdown() } }
        var components = URLComponents(string: server.baseURL.absoluteString + "/redirect-to")
        components?.queryItems = [URLQueryItem(name: "url", value: location)]
        let url = try #require(components?.url?.absoluteString)
        for arguments in [["--follow", url], ["--all", "--follow", url]] {
            let run = try await CourierProcess.run(arguments)
            #expect(run.status == 1, "\(run)")
            #expect(run.errors.hasPrefix("courier: error: will not follow the redirect from "), "\(run)")
            #expect(run.errors.contains(location), "\(run)")
        }
        let plain = try await CourierProcess.run(["--print", "h", url])
        #expect(plain.status == 0 && plain.output.hasPrefix("HTTP/1.1 302"), "\(plain)")
    }

    @Test("more redirects than --max-redirects: exit 6 and a message")
    func tooManyRedirects() async throws {
        let server = try await TestServer.start()
        defer { Task { try await server.shutdown() } }
        let run = try await CourierProcess.run(["--follow", "--max-redirects", "2", server.baseURL.absoluteString + "/redirect/5"])
        #expect(run.status == 6, "\(run)")
        #expect(run.errors.hasPrefix("courier: error: too many redirects (more than 2)"), "\(run)")
        #expect(run.stdout.isEmpty)
    }

    @Test("--timeout: a server that never answers gives exit 2")
    func timeout() async throws {
        let server = try await TestServer.start()
        defer { Task { try await server.shutdown() } }
        let run = try await CourierProcess.run(["--timeout", "0.5", server.baseURL.absoluteString + "/fault/no-response"])
        #expect(run.status == 2, "\(run)")
        #expect(run.errors.hasPrefix("courier: error: request timed out (--timeout 0.5)"), "\(run)")
        #expect(run.errors.contains("try a larger --timeout"), "\(run)")
    }

    @Test("--check-status maps 3xx, 4xx, 5xx to 3, 4, 5 with a warning; without it every status exits 0")
    func checkStatus() async throws {
        let server = try await TestServer.start()
        defer { Task { try await server.shutdown() } }
        let base = server.baseURL.absoluteString
        for (code, status, phrase) in [(302, Int32(3), "Found"), (404, 4, "Not Found"), (500, 5, "Internal Server Error")] {
            let run = try await CourierProcess.run(["--check-status", "\(base)/status/\(code)"])
            #expect(run.status == status, "\(run)")
            #expect(run.errors == "courier: warning: HTTP \(code) \(phrase)\n", "\(run)")
        }
        let unchecked = try await CourierProcess.run(["\(base)/status/404"])
        #expect(unchecked.status == 0, "\(unchecked)")
        let ok = try await CourierProcess.run(["--check-status", "\(base)/status/200"])
        #expect(ok.status == 0 && ok.errors.isEmpty, "\(ok)")
    }

    @Test("a closed port: exit 7 with what happened and what to try")
    func connectionRefused() async throws {
        let closed = try RefusingPort()
        let run = try await CourierProcess.run([closed.baseURL + "/get"])
        #expect(run.status == 7, "\(run)")
        #expect(run.errors.hasPrefix("courier: error: could not connect to 127.0.0.1:\(closed.port)"), "\(run)")
        #expect(run.errors.contains("Is the server running"), "\(run)")
        #expect(!run.errors.contains("CourierError"), "\(run)")
    }

    @Test("the exit statuses are documented in courier --help")
    func helpDocumentsStatuses() async throws {
        let run = try await CourierProcess.run(["--help"])
        #expect(run.status == 0, "\(run)")
        for text in ["6 too many redirects", "7 could", "8 TLS", "2 timed out", "(default)"] {
            #expect(run.output.replacingOccurrences(of: "\n", with: " ").contains(text), "\(text): \(run)")
        }
    }
}
