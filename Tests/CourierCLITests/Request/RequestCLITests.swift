import CourierTestServer
import Foundation
import Testing

/// `courier [METHOD] URL [ITEM ...]` run as a subprocess against the test server: what each
/// item and body option puts on the wire, as the server echoes it back.
@Suite("courier request items")
struct RequestCLITests {
    @Test("the binary is found beside the test bundle")
    func binaryExists() {
        #expect(FileManager.default.isExecutableFile(atPath: CourierBinary.url.path), "\(CourierBinary.url.path)")
    }

    @Test("key==value items reach the query, repeated names repeated; the method defaults to GET")
    func queryItems() async throws {
        let server = try await TestServer.start()
        defer { Task { try await server.shutdown() } }
        let run = try await CourierProcess.run([server.baseURL.absoluteString + "/get", "q==a b", "n==1", "n==2"])
        #expect(run.status == 0, "\(run)")
        let args = try run.json()["args"] as? [String: Any]
        #expect(args?["q"] as? String == "a b")
        #expect(args?["n"] as? [String] == ["1", "2"])
        #expect((try run.json()["url"] as? String)?.hasSuffix("/get?q=a%20b&n=1&n=2") == true)
    }

    @Test("key=value and key:=json make a JSON object; POST is inferred; JSON headers are sent")
    func jsonFields() async throws {
        let server = try await TestServer.start()
        defer { Task { try await server.shutdown() } }
        let run = try await CourierProcess.run([
            server.baseURL.absoluteString + "/post", "name=courier", "n:=42", "ok:=true", "list:=[1,\"two\"]",
            "nested:={\"a\":null}",
        ])
        #expect(run.status == 0, "\(run)")
        let body = try run.json()
        let json = body["json"] as? [String: Any]
        #expect(json?["name"] as? String == "courier")
        #expect(json?["n"] as? Int == 42)
        #expect(json?["ok"] as? Bool == true)
        #expect((json?["list"] as? [Any])?.count == 2)
        #expect((json?["nested"] as? [String: Any])?["a"] is NSNull)
        let headers = body["headers"] as? [String: String]
        #expect(headers?["Content-Type"] == "application/json")
        #expect(headers?["Accept"] == "application/json, */*;q=0.5")
    }

    @Test("invalid raw JSON is refused before sending: exit 2 and the offending item named")
    func invalidRawJSON() async throws {
        let server = try await TestServer.start()
        defer { Task { try await server.shutdown() } }
        let run = try await CourierProcess.run([server.baseURL.absoluteString + "/post", "list:=[1,"])
        #expect(run.status == 2, "\(run)")
        #expect(run.errors.contains("courier: error: invalid JSON in 'list:=[1,'"), "\(run)")
        #expect(server.requestsReceived == 0)
    }

    @Test("an item without a separator is a usage error (exit 2)")
    func badItem() async throws {
        let run = try await CourierProcess.run(["http://127.0.0.1:9/get", "nonsense"])
        #expect(run.status == 2, "\(run)")
        #expect(run.errors.hasPrefix("courier: error: invalid request item 'nonsense'"), "\(run)")
        #expect(!run.errors.contains("CourierError("))
    }

    @Test("--form sends a URL-encoded form in item order")
    func form() async throws {
        let server = try await TestServer.start()
        defer { Task { try await server.shutdown() } }
        let run = try await CourierProcess.run(["--form", server.baseURL.absoluteString + "/post", "b=2", "a=x y"])
        #expect(run.status == 0, "\(run)")
        let body = try run.json()
        #expect(body["form"] as? [String: String] == ["a": "x y", "b": "2"])
        #expect(body["data"] as? String == "")
        #expect((body["headers"] as? [String: String])?["Content-Type"] == "application/x-www-form-urlencoded")
    }

    @Test("field@path makes a multipart request with the file as a part")
    func multipartFile() async throws {
        let server = try await TestServer.start()
        defer { Task { try await server.shutdown() } }
        let directory = try CourierProcess.temporaryDirectory()
        let file = directory.appendingPathComponent("notes.txt")
        try Data("hello from a file\n".utf8).write(to: file)
        let run = try await CourierProcess.run([
            server.baseURL.absoluteString + "/post", "title=notes", "doc@\(file.path)",
        ])
        #expect(run.status == 0, "\(run)")
        let body = try run.json()
        #expect(body["files"] as? [String: String] == ["doc": "hello from a file\n"])
        #expect(body["form"] as? [String: String] == ["title": "notes"])
        let contentType = (body["headers"] as? [String: String])?["Content-Type"] ?? ""
        #expect(contentType.hasPrefix("multipart/form-data; boundary="), "\(contentType)")
    }

    @Test("--multipart sends fields as parts even without files")
    func multipartFlag() async throws {
        let server = try await TestServer.start()
        defer { Task { try await server.shutdown() } }
        let run = try await CourierProcess.run(["--multipart", server.baseURL.absoluteString + "/post", "a=1"])
        #expect(run.status == 0, "\(run)")
        let body = try run.json()
        #expect(body["form"] as? [String: String] == ["a": "1"])
        let contentType = (body["headers"] as? [String: String])?["Content-Type"] ?? ""
        #expect(contentType.hasPrefix("multipart/form-data"))
    }

    @Test("@file is the whole body, its type guessed from the extension")
    func bodyFile() async throws {
        let server = try await TestServer.start()
        defer { Task { try await server.shutdown() } }
        let directory = try CourierProcess.temporaryDirectory()
        let file = directory.appendingPathComponent("payload.json")
        try Data(#"{"from":"file"}"#.utf8).write(to: file)
        let run = try await CourierProcess.run(["PUT", server.baseURL.absoluteString + "/put", "@\(file.path)"])
        #expect(run.status == 0, "\(run)")
        let body = try run.json()
        #expect(body["data"] as? String == #"{"from":"file"}"#)
        #expect((body["json"] as? [String: String]) == ["from": "file"])
        #expect((body["headers"] as? [String: String])?["Content-Type"] == "application/json")
    }

    @Test("@file through a symbolic link sends the file it points to, as curl does")
    func bodyFileThroughASymbolicLink() async throws {
        let server = try await TestServer.start()
        defer { Task { try await server.shutdown() } }
        let directory = try CourierProcess.temporaryDirectory()
        let file = directory.appendingPathComponent("payload.json")
        try Data(#"{"from":"linked file"}"#.utf8).write(to: file)
        let link = directory.appendingPathComponent("link.json")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: file)
        let run = try await CourierProcess.run(["PUT", server.baseURL.absoluteString + "/put", "@\(link.path)"])
        #expect(run.status == 0, "\(run)")
        let body = try run.json()
        #expect(body["data"] as? String == #"{"from":"linked file"}"#)
    }

    @Test("a missing @file is reported, nothing is sent")
    func missingBodyFile() async throws {
        let server = try await TestServer.start()
        defer { Task { try await server.shutdown() } }
        let run = try await CourierProcess.run([server.baseURL.absoluteString + "/post", "@/nonexistent/file.json"])
        #expect(run.status == 2, "\(run)")
        #expect(run.errors.contains("/nonexistent/file.json"), "\(run)")
        #expect(server.requestsReceived == 0)
    }

    @Test("Header:value sets a header, 'Header:' removes a default one, 'Header;' sends it empty")
    func headers() async throws {
        let server = try await TestServer.start()
        defer { Task { try await server.shutdown() } }
        let run = try await CourierProcess.run([
            server.baseURL.absoluteString + "/headers", "X-Token:abc", "User-Agent:", "X-Empty;",
        ])
        #expect(run.status == 0, "\(run)")
        let headers = try run.json()["headers"] as? [String: String]
        #expect(headers?["X-Token"] == "abc")
        #expect(headers?["User-Agent"] == nil)
        #expect(headers?["X-Empty"] == "")
    }

    @Test("--auth user:pass sends Basic credentials")
    func basicAuth() async throws {
        let server = try await TestServer.start()
        defer { Task { try await server.shutdown() } }
        let good = try await CourierProcess.run(["--auth", "u:p", server.baseURL.absoluteString + "/basic-auth/u/p"])
        #expect(good.status == 0, "\(good)")
        #expect(try good.json()["authenticated"] as? Bool == true)
        let bad = try await CourierProcess.run([
            "--check-status", "--auth", "u:wrong", server.baseURL.absoluteString + "/basic-auth/u/p",
        ])
        #expect(bad.status == 4, "\(bad)")
    }

    @Test("--auth-type digest answers the server's Digest challenge")
    func digestAuth() async throws {
        let server = try await TestServer.start()
        defer { Task { try await server.shutdown() } }
        let run = try await CourierProcess.run([
            "-A", "digest", "-a", "user:secret", server.baseURL.absoluteString + "/digest-auth/auth/user/secret",
        ])
        #expect(run.status == 0, "\(run)")
        #expect(try run.json()["authenticated"] as? Bool == true)
        #expect(try run.json()["user"] as? String == "user")
    }

    @Test("--auth without a password and no terminal: an error, not a prompt")
    func authWithoutPassword() async throws {
        let run = try await CourierProcess.run(["--auth", "user", "http://127.0.0.1:9/basic-auth/u/p"])
        #expect(run.status == 2, "\(run)")
        #expect(run.errors.contains("--auth user:PASSWORD"), "\(run)")
    }

    @Test("--bearer sends the token")
    func bearer() async throws {
        let server = try await TestServer.start()
        defer { Task { try await server.shutdown() } }
        let run = try await CourierProcess.run(["--bearer", "t0ken", server.baseURL.absoluteString + "/bearer"])
        #expect(run.status == 0, "\(run)")
        #expect(try run.json()["token"] as? String == "t0ken")
    }
}
