@testable import Courier
import CourierTestServer
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// `cURLDescription`: the command's shape with plain values, and curl itself running it
/// against the test server to the same result as Courier sending the request.
@Suite("cURL description")
struct CURLDescriptionTests {
    static let curlPath = ["/usr/bin/curl", "/usr/local/bin/curl", "/bin/curl"].first { FileManager.default.isExecutableFile(atPath: $0) }

    /// Runs `command` with `/bin/sh -c` and returns its standard output.
    static func shell(_ command: String) throws -> Data {
        try ProcessLauncher.runToEnd("/bin/sh", ["-c", command], includingStandardError: false).output
    }

    @Test func shellQuoting() {
        #expect(CURLCommand.quote("plain") == "'plain'")
        #expect(CURLCommand.quote("it's $HOME `x` \"q\"") == #"'it'\''s $HOME `x` "q"'"#)
        #expect(CURLCommand.octalEscaped(Data([0, 7, 39, 255])) == #"\000\007\047\377"#)
    }

    @Test func commandShape() {
        #expect(CURLCommand.command(method: "GET", url: "http://h/a?b=c", headers: [], body: nil) == "curl 'http://h/a?b=c'")
        #expect(CURLCommand.command(method: "HEAD", url: "http://h/", headers: [], body: nil) == "curl --head 'http://h/'")
        #expect(CURLCommand.command(method: "DELETE", url: "http://[::1]:80/", headers: [("X-A", "1"), ("X-Empty", "")], body: nil)
            == "curl --globoff -X 'DELETE' 'http://[::1]:80/' -H 'X-A: 1' -H 'X-Empty;'")
        #expect(CURLCommand.command(method: "POST", url: "http://h/", headers: [], body: Data("a'b".utf8))
            == #"curl -X 'POST' 'http://h/' -H 'Content-Type:' --data-raw 'a'\''b'"#)
        #expect(CURLCommand.command(method: "PUT", url: "http://h/", headers: [("Content-Type", "x/y")], body: Data([0, 1]))
            == #"printf '\000\001' | curl -X 'PUT' 'http://h/' -H 'Content-Type: x/y' --data-binary @-"#)
    }

    @Test func requestAndTaskDescriptions() {
        var request = URLRequest(url: URL(string: "http://example.com/p")!)
        request.httpMethod = "PATCH"
        request.setValue("b", forHTTPHeaderField: "B-Header")
        request.setValue("a", forHTTPHeaderField: "a-header")
        // Foundation on Linux writes names canonically (A-Header); sorted without case.
        #expect(request.cURLDescription.lowercased() == "curl -X 'PATCH' 'http://example.com/p' -H 'A-Header: a' -H 'B-Header: b'".lowercased())
        var configuration = SessionConfiguration.default
        configuration.httpAdditionalHeaders = ["X-Session": "s", "B-Header": "ignored"]
        let task = URLSessionManager(configuration: configuration).dataTask(with: request)
        #expect(task.cURLDescription.lowercased() == "curl -X 'PATCH' 'http://example.com/p' -H 'A-Header: a' -H 'B-Header: b' -H 'X-Session: s'".lowercased())
        task.cancel()
    }

    /// Courier and curl send the same request to `/anything`: the echoes match.
    func compare(_ request: URLRequest, server: TestServer) async throws {
        let manager = URLSessionManager()
        let (object, _) = try await manager.data(for: request)
        let courier = try #require(object as? JSONValue)
        let curlOutput = try Self.shell(request.cURLDescription)
        let curl = try JSONValue(parsing: curlOutput)
        for key in ["method", "data", "json", "args", "url", "form"] {
            #expect(courier[key] == curl[key], "\(key)")
        }
        for header in ["Content-Type", "X-Quote", "X-Shell", "Authorization"] {
            #expect(courier["headers"]?[header] == curl["headers"]?[header], "\(header)")
        }
    }

    @Test(.enabled(if: curlPath != nil, "curl is not installed"))
    func curlSendsTheSameRequest() async throws {
        try await TestServer.withRunning { server in
            var request = URLRequest(url: server.sessionURL("/anything/x?q=a%20b&r=1"))
            request.httpMethod = "POST"
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            request.setValue("it's \"quoted\"", forHTTPHeaderField: "X-Quote")
            request.setValue("$(touch /tmp/courier-curl-pwned) `id` ; | &", forHTTPHeaderField: "X-Shell")
            request.setValue("Bearer t0k'en", forHTTPHeaderField: "Authorization")
            request.httpBody = Data(#"{"name": "O'Brien", "cmd": "$(rm -rf /)", "line": "a\nb"}"#.utf8)
            try await compare(request, server: server)
            #expect(!FileManager.default.fileExists(atPath: "/tmp/courier-curl-pwned"))
        }
    }

    @Test(.enabled(if: curlPath != nil, "curl is not installed"))
    func curlSendsTheSameBinaryBodyAndMethod() async throws {
        try await TestServer.withRunning { server in
            var request = URLRequest(url: server.sessionURL("/anything"))
            request.httpMethod = "PUT"
            request.setValue("application/octet-stream", forHTTPHeaderField: "Content-Type")
            request.httpBody = Data((0...255).map { UInt8($0) } + [0, 39, 10, 92])
            try await compare(request, server: server)
            var get = URLRequest(url: server.sessionURL("/anything?x=1"))
            get.setValue("v", forHTTPHeaderField: "X-Quote")
            try await compare(get, server: server)
        }
    }

    /// A body that starts with `@` is text to curl, never a file to upload: run through curl,
    /// the server receives the literal text, as Courier sends it (with `--data-binary`, curl
    /// would have read and sent the named file).
    @Test(.enabled(if: curlPath != nil, "curl is not installed"))
    func bodyStartingWithAtIsNeverAFileName() async throws {
        let secret = FileManager.default.temporaryDirectory.appendingPathComponent("courier-curl-secret-\(UUID().uuidString)")
        try Data("the file's contents".utf8).write(to: secret)
        defer { try? FileManager.default.removeItem(at: secret) }
        try await TestServer.withRunning { server in
            var request = URLRequest(url: server.sessionURL("/anything"))
            request.httpMethod = "POST"
            request.setValue("text/plain", forHTTPHeaderField: "Content-Type")
            request.httpBody = Data("@\(secret.path)".utf8)
            #expect(!request.cURLDescription.contains("--data-binary"), "\(request.cURLDescription)")
            let echoed = try JSONValue(parsing: try Self.shell(request.cURLDescription))
            #expect(echoed["data"]?.stringValue == "@\(secret.path)")
            try await compare(request, server: server)
        }
    }
}
