import CourierTestServer
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Testing

/// The HTTPie options beyond the basics: --offline, --all, --cert/--cert-key, --default-scheme,
/// --https and courier-https, --raw, --chunked, -x/--compress, -h/--headers and -b/--body.
@Suite("courier: HTTPie's options")
struct HTTPieOptionsCLITests {
    @Test func offlinePrintsTheRequestAndSendsNothing() async throws {
        try await TestServer.withRunning { server in
            let url = server.baseURL.absoluteString + "/post"
            let run = try await CourierProcess.run(["--offline", url, "b=1", "a:=2", "X-Trace:7"])
            #expect(run.status == 0, "\(run)")
            #expect(run.output.hasPrefix("POST /post HTTP/1.1\n"), "\(run)")
            #expect(run.output.contains("\nX-Trace: 7\n"), "\(run)")
            #expect(run.output.hasSuffix("\n\n{\"b\":\"1\",\"a\":2}\n\n"), "\(run)")
            #expect(server.requestsReceived(forPath: "/post") == 0)
            // No server needed at all.
            let nowhere = try await CourierProcess.run(["--offline", "-p", "H", "http://127.0.0.1:9/x"])
            #expect(nowhere.status == 0 && nowhere.output.hasPrefix("GET /x HTTP/1.1\n"), "\(nowhere)")
        }
    }

    @Test func jsonKeysKeepTheOrderTyped() async throws {
        try await TestServer.withRunning { server in
            let run = try await CourierProcess.run([
                server.baseURL.absoluteString + "/post", "zeta=1", "alpha=2", "mid:=3", #"obj:={"y":1,"x":[2,1]}"#,
            ])
            #expect(run.status == 0, "\(run)")
            #expect(try run.json()["data"] as? String == #"{"zeta":"1","alpha":"2","mid":3,"obj":{"y":1,"x":[2,1]}}"#, "\(run)")
        }
    }

    @Test func unknownOptionIsExit2LikeEveryUsageError() async throws {
        let run = try await CourierProcess.run(["--no-such-option", "http://127.0.0.1:9/get"])
        #expect(run.status == 2, "\(run)")
        #expect(run.errors.contains("--no-such-option"), "\(run)")
        let help = try await CourierProcess.run(["request", "--help"])
        // The help text (wrapped to the terminal width) promises 2 for invalid items/options.
        let promise = help.output.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        #expect(help.status == 0 && promise.contains("2 timed out (--timeout, --max-time), or invalid items/options"), "\(help)")
    }

    @Test func allShowsEveryRedirectHop() async throws {
        try await TestServer.withRunning { server in
            let run = try await CourierProcess.run(["--all", "--follow", "-p", "Hh", server.baseURL.absoluteString + "/redirect/2"])
            #expect(run.status == 0, "\(run)")
            let statusLines = run.output.split(separator: "\n").filter { $0.hasPrefix("HTTP/1.1 ") }
            #expect(statusLines == ["HTTP/1.1 302 Found", "HTTP/1.1 302 Found", "HTTP/1.1 200 OK"], "\(run)")
            let requestLines = run.output.split(separator: "\n").filter { $0.hasPrefix("GET ") }
            #expect(requestLines == ["GET /redirect/2 HTTP/1.1", "GET /relative-redirect/1 HTTP/1.1", "GET /get HTTP/1.1"], "\(run)")
            // Without --all only the final exchange is shown.
            let last = try await CourierProcess.run(["--follow", "-p", "h", server.baseURL.absoluteString + "/redirect/2"])
            #expect(last.output.hasPrefix("HTTP/1.1 200 OK\n") && !last.output.contains("302"), "\(last)")
            // --max-redirects still applies.
            let tooMany = try await CourierProcess.run(["--all", "--follow", "--max-redirects", "1", "-p", "h", server.baseURL.absoluteString + "/redirect/3"])
            #expect(tooMany.status == 6, "\(tooMany)")
        }
    }

    @Test func certAndCertKeyAnswerAServerThatRequiresAClientCertificate() async throws {
        try await TestServer.withRunning(.init(tls: .valid, requireClientCertificate: true)) { server in
            let directory = try CourierProcess.temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let authority = try TestCertificateAuthority.shared
            let ca = directory.appendingPathComponent("ca.pem")
            try Data(authority.rootCertificatePEM.utf8).write(to: ca)
            let cert = directory.appendingPathComponent("client.pem")
            try Data(authority.clientIdentity.certificatesPEM.utf8).write(to: cert)
            let key = directory.appendingPathComponent("client.key")
            try Data(authority.clientIdentity.privateKeyPEM.utf8).write(to: key)
            let both = directory.appendingPathComponent("both.pem")
            try Data((authority.clientIdentity.certificatesPEM + authority.clientIdentity.privateKeyPEM).utf8).write(to: both)
            let url = server.baseURL.absoluteString + "/get"

            let refused = try await CourierProcess.run(["--verify", ca.path, url])
            #expect(refused.status != 0, "\(refused)")
            let separate = try await CourierProcess.run(["--verify", ca.path, "--cert", cert.path, "--cert-key", key.path, url])
            #expect(separate.status == 0, "\(separate)")
            #expect((try? separate.json()["url"] as? String) == url, "\(separate)")
            let combined = try await CourierProcess.run(["--verify", ca.path, "--cert", both.path, url])
            #expect(combined.status == 0, "\(combined)")
            let noKey = try await CourierProcess.run(["--verify", ca.path, "--cert", cert.path, url])
            #expect(noKey.status == 2 && noKey.errors.contains("--cert-key"), "\(noKey)")
            let missing = try await CourierProcess.run(["--cert", "/nonexistent.pem", url])
            #expect(missing.status == 2 && missing.errors.contains("/nonexistent.pem"), "\(missing)")
        }
    }

    @Test func defaultSchemeHTTPSAndCourierHTTPS() async throws {
        try await TestServer.withRunning(.init(tls: .valid)) { server in
            let directory = try CourierProcess.temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let ca = directory.appendingPathComponent("ca.pem")
            try Data(TestCertificateAuthority.shared.rootCertificatePEM.utf8).write(to: ca)
            let bare = "127.0.0.1:\(server.port)/get"
            let expected = "https://127.0.0.1:\(server.port)/get"
            for flags in [["--default-scheme", "https"], ["--default-scheme=https"], ["--https"]] {
                let run = try await CourierProcess.run(flags + ["--verify", ca.path, bare])
                #expect(run.status == 0, "\(flags): \(run)")
                #expect((try? run.json()["url"] as? String) == expected, "\(run)")
            }
            let alias = try await CourierProcess.run(["--verify", ca.path, bare], executable: CourierBinary.httpsURL)
            #expect(alias.status == 0, "\(alias)")
            #expect((try? alias.json()["url"] as? String) == expected, "\(alias)")
            // An explicit scheme wins; a bad default scheme is exit 2.
            let explicit = try await CourierProcess.run(["--default-scheme", "https", "--offline", "-p", "H", "http://h.example/"])
            #expect(explicit.output.contains("Host: h.example\n"), "\(explicit)")
            let bad = try await CourierProcess.run(["--default-scheme", "ftp", bare])
            #expect(bad.status == 2 && bad.errors.contains("--default-scheme"), "\(bad)")
        }
    }

    @Test func rawSendsTheTextAsTheBody() async throws {
        try await TestServer.withRunning { server in
            let run = try await CourierProcess.run(["--raw", "hello raw", server.baseURL.absoluteString + "/anything"])
            #expect(run.status == 0, "\(run)")
            let echo = try run.json()
            #expect(echo["method"] as? String == "POST" && echo["data"] as? String == "hello raw", "\(run)")
            let mixed = try await CourierProcess.run(["--raw", "x", server.baseURL.absoluteString + "/anything", "a=1"])
            #expect(mixed.status == 2, "\(mixed)")
        }
    }

    @Test func chunkedSendsTheBodyWithTransferEncodingChunked() async throws {
        try await TestServer.withRunning { server in
            let run = try await CourierProcess.run(["--chunked", server.baseURL.absoluteString + "/anything", "a=1", "b=2"])
            #expect(run.status == 0, "\(run)")
            let echo = try run.json()
            let headers = try #require(echo["headers"] as? [String: Any])
            #expect(headers["Transfer-Encoding"] as? String == "chunked", "\(run)")
            #expect(headers["Content-Length"] == nil, "\(run)")
            #expect(echo["data"] as? String == #"{"a":"1","b":"2"}"#, "\(run)")
        }
    }

    @Test func compressDeflatesTheBodyWhenThatMakesItSmaller() async throws {
        try await TestServer.withRunning { server in
            let url = server.baseURL.absoluteString + "/anything"
            let long = String(repeating: "courier ", count: 200)
            let run = try await CourierProcess.run(["-x", url, "text=\(long)"])
            #expect(run.status == 0, "\(run)")
            let echo = try run.json()
            let headers = try #require(echo["headers"] as? [String: Any])
            #expect(headers["Content-Encoding"] as? String == "deflate", "\(run)")
            let length = Int(headers["Content-Length"] as? String ?? "") ?? .max
            #expect(length < long.utf8.count / 4, "\(run)")
            // zlib's header: deflate, 32 KiB window.
            let data = try #require(echo["data"] as? String)
            let base64 = try #require(data.split(separator: ",").last)
            #expect(Data(base64Encoded: String(base64))?.first == 0x78, "\(run)")

            // A tiny body grows when deflated: sent as is, unless -xx.
            let small = try await CourierProcess.run(["--compress", url, "a=1"])
            #expect((try small.json()["headers"] as? [String: Any])?["Content-Encoding"] == nil, "\(small)")
            #expect(try small.json()["data"] as? String == #"{"a":"1"}"#, "\(small)")
            let forced = try await CourierProcess.run(["-xx", url, "a=1"])
            #expect((try forced.json()["headers"] as? [String: Any])?["Content-Encoding"] as? String == "deflate", "\(forced)")
        }
    }

    @Test func headersAndBodyShortcuts() async throws {
        try await TestServer.withRunning { server in
            let url = server.baseURL.absoluteString + "/get"
            for flag in ["-h", "--headers"] {
                let run = try await CourierProcess.run([flag, url])
                #expect(run.status == 0, "\(run)")
                #expect(run.output.hasPrefix("HTTP/1.1 200 OK\n") && run.output.hasSuffix("\n\n"), "\(run)")
                #expect(!run.output.contains("\"origin\""), "\(run)")
            }
            for flag in ["-b", "--body"] {
                let run = try await CourierProcess.run(["-p", "Hh", flag, url])
                #expect(run.status == 0, "\(run)")
                #expect(try run.json()["url"] as? String == url, "\(run)")
            }
            let help = try await CourierProcess.run(["--help"])
            #expect(help.status == 0 && help.output.contains("USAGE"), "\(help)")
        }
    }

    @Test func streamPrintsEachChunkAsItArrives() async throws {
        try await TestServer.withRunning { server in
            // Two asterisks five minutes apart (the test ends long before the second, so no timing
            // is involved); --pretty all would otherwise gather the body until its end.
            let child = try CourierChild(["-S", "--pretty", "all", server.baseURL.absoluteString + "/drip?duration=600&numbytes=2"])
            let arrived = await child.waitForOutput(containing: "*")
            #expect(arrived, "stdout: \(child.output) stderr: \(child.errorOutput)")
            #expect(!child.output.contains("**"), "the first chunk only, before the stream ended: \(child.output)")
            child.send(SIGTERM)
            _ = await child.waitForExit()
        }
    }

    @Test func serverSentEventsStreamWithoutTheFlag() async throws {
        // One event, then silence (the stream never ends): --pretty all would gather it forever.
        let server = try await HostileServer.start(HostileScript([
            .readHead,
            .head("200 OK", ["Content-Type: text/event-stream", "Connection: close"]),
            .write("data: first\n\n"), .stall,
        ]))
        defer { Task { try await server.shutdown() } }
        let child = try CourierChild(["--pretty", "all", "http://127.0.0.1:\(server.port)/events"])
        let arrived = await child.waitForOutput(containing: "data: first")
        #expect(arrived, "stdout: \(child.output) stderr: \(child.errorOutput)")
        child.send(SIGTERM)
        _ = await child.waitForExit()
    }

    @Test func xmlAndHTMLAreColoured() async throws {
        try await TestServer.withRunning { server in
            let xml = try await CourierProcess.run(["--pretty", "colors", server.baseURL.absoluteString + "/xml"])
            #expect(xml.status == 0, "\(xml)")
            #expect(xml.output.contains("\u{1B}[34mslideshow\u{1B}[0m"), "\(xml)")
            #expect(xml.output.contains("\u{1B}[36mtitle\u{1B}[0m="), "\(xml)")
            let html = try await CourierProcess.run(["--pretty", "all", server.baseURL.absoluteString + "/html"])
            #expect(html.output.contains("\u{1B}[34mbody\u{1B}[0m"), "\(html)")
            let plain = try await CourierProcess.run(["--pretty", "none", server.baseURL.absoluteString + "/xml"])
            #expect(!plain.output.contains("\u{1B}["), "\(plain)")
        }
    }
}
