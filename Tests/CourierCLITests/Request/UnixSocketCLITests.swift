import CourierTestServer
import Foundation
import Testing

/// curl's `--unix-socket PATH` and `http+unix://` URLs, against the test server on a socket.
@Suite("courier --unix-socket")
struct UnixSocketCLITests {
    static func socketPath() -> String { "/tmp/courier-cli-\(UUID().uuidString.prefix(8)).sock" }

    @Test("--unix-socket sends the request to the socket; the URL's host is the Host header")
    func unixSocketOption() async throws {
        let path = Self.socketPath()
        try await TestServer.withRunning(.init(unixSocketPath: path)) { server in
            let run = try await CourierProcess.run(["--unix-socket", path, "http://docker/anything/v1.45/info", "all==1"])
            #expect(run.status == 0, "\(run)")
            let json = try run.json()
            #expect((json["headers"] as? [String: Any])?["Host"] as? String == "docker")
            #expect((json["args"] as? [String: String]) == ["all": "1"])
            #expect(server.requestsReceived(forPath: "/anything/v1.45/info") == 1)
        }
    }

    @Test("an http+unix URL needs no option; -v prints Host: localhost")
    func httpUnixURL() async throws {
        let path = Self.socketPath()
        try await TestServer.withRunning(.init(unixSocketPath: path)) { server in
            let run = try await CourierProcess.run(["-v", server.baseURL.absoluteString + "/get"])
            #expect(run.status == 0, "\(run)")
            #expect(run.output.contains("Host: localhost"), "\(run)")
            #expect(run.output.contains("\"Host\" : \"localhost\""), "\(run)")
        }
    }

    @Test("a socket nobody listens on is exit 7 naming the path; an empty path is a usage error")
    func failures() async throws {
        let path = Self.socketPath()
        let missing = try await CourierProcess.run(["--unix-socket", path, "http://docker/get"])
        #expect(missing.status == 7, "\(missing)")
        #expect(missing.errors.contains(path), "\(missing)")
        let empty = try await CourierProcess.run(["--unix-socket", "", "http://docker/get"])
        #expect(empty.status == 2, "\(empty)")
        #expect(empty.errors.contains("--unix-socket"), "\(empty)")
    }
}
