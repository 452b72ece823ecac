import CourierTestServer
import Foundation
import Testing

/// `courier --curl` prints the curl command for the request instead of sending it; curl
/// running that command sends the same request.
@Suite("courier: --curl")
struct CurlCLITests {
    static let curlInstalled = FileManager.default.isExecutableFile(atPath: "/usr/bin/curl")

    static func shell(_ command: String) throws -> String {
        String(decoding: try ProcessLauncher.runToEnd("/bin/sh", ["-c", command], includingStandardError: false).output, as: UTF8.self)
    }

    @Test(.enabled(if: curlInstalled, "curl is not installed"))
    func curlKeepsTheProxy() async throws {
        let socks = try await TestSOCKSProxyServer.start(credentials: ("ada", "secret"))
        defer { Task { try await socks.shutdown() } }
        try await TestServer.withRunning { server in
            let proxy = "socks5h://ada:secret@127.0.0.1:\(socks.port)"
            let url = "http://localhost:\(server.port)/anything/proxied"
            let run = try await CourierProcess.run(["--curl", "--proxy", proxy, url])
            #expect(run.status == 0, "\(run)")
            #expect(run.output.contains(" --proxy '\(proxy)'"), "\(run)")
            #expect(socks.requests.isEmpty)
            let echo = try JSONSerialization.jsonObject(with: Data(try Self.shell(run.output).utf8)) as? [String: Any]
            #expect(echo?["method"] as? String == "GET")
            #expect(socks.requests.map(\.host) == ["localhost"])
            #expect(socks.requests.first?.username == "ada")

            let bad = try await CourierProcess.run(["--curl", "--proxy", "ftp://127.0.0.1:1", url])
            #expect(bad.status == 2, "\(bad)")
            #expect(bad.errors.contains("--proxy"), "\(bad)")
        }
    }

    @Test(.enabled(if: curlInstalled, "curl is not installed"))
    func curlPrintsACommandThatSendsTheSameRequest() async throws {
        try await TestServer.withRunning { server in
            let url = server.baseURL.absoluteString + "/anything/c?q=1"
            let run = try await CourierProcess.run(["--curl", "PUT", url, "name=O'Brien", "n:=2", "X-Shell:$(id) `x` 'q'"])
            #expect(run.status == 0, "\(run)")
            #expect(run.output.hasPrefix("curl -X 'PUT' '\(url)'"), "\(run)")
            #expect(server.requestsReceived(forPath: "/anything/c") == 0)
            let echo = try JSONSerialization.jsonObject(with: Data(try Self.shell(run.output).utf8)) as? [String: Any]
            #expect(echo?["method"] as? String == "PUT")
            let json = echo?["json"] as? [String: Any]
            #expect(json?["name"] as? String == "O'Brien")
            #expect(json?["n"] as? Int == 2)
            let headers = echo?["headers"] as? [String: Any]
            #expect(headers?["X-Shell"] as? String == "$(id) `x` 'q'")
            #expect(server.requestsReceived(forPath: "/anything/c") == 1)
        }
    }

    @Test(.enabled(if: curlInstalled, "curl is not installed"))
    func curlWritesAFormOut() async throws {
        try await TestServer.withRunning { server in
            let url = server.baseURL.absoluteString + "/post"
            let run = try await CourierProcess.run(["--curl", "--multipart", url, "a=1", "b=two"])
            #expect(run.status == 0, "\(run)")
            let echo = try JSONSerialization.jsonObject(with: Data(try Self.shell(run.output).utf8)) as? [String: Any]
            let form = echo?["form"] as? [String: Any]
            #expect(form?["a"] as? String == "1")
            #expect(form?["b"] as? String == "two")
        }
    }

    /// `--curl` with a body that starts with `@` (from `--raw` or piped): curl running the
    /// printed command sends that text, never the contents of the file it names.
    @Test(.enabled(if: curlInstalled, "curl is not installed"))
    func curlNeverUploadsAFileNamedByTheBody() async throws {
        let secret = FileManager.default.temporaryDirectory.appendingPathComponent("courier-curl-\(UUID().uuidString)")
        try Data("secret contents".utf8).write(to: secret)
        defer { try? FileManager.default.removeItem(at: secret) }
        try await TestServer.withRunning { server in
            let url = server.baseURL.absoluteString + "/anything"
            for run in [
                try await CourierProcess.run(["--curl", "--raw", "@\(secret.path)", "POST", url]),
                try await CourierProcess.run(["--curl", "POST", url], stdin: .pipe(Data("@\(secret.path)".utf8))),
            ] {
                #expect(run.status == 0, "\(run)")
                let echo = try JSONSerialization.jsonObject(with: Data(try Self.shell(run.output).utf8)) as? [String: Any]
                #expect(echo?["data"] as? String == "@\(secret.path)", "\(run.output)")
            }
        }
    }
}

