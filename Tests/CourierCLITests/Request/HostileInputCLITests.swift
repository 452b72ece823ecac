import CourierTestServer
import Foundation
import Testing

/// What `courier` does with input meant to confuse it or to leak: header injection, URL
/// passwords, impossible ports, and error messages that would expose build paths.
@Suite("courier hostile input")
struct HostileInputCLITests {
    @Test("a header item with CR or LF is refused (exit 2, the item named, escaped); nothing is sent")
    func headerInjection() async throws {
        let server = try await TestServer.start()
        defer { Task { try await server.shutdown() } }
        let url = server.baseURL.absoluteString + "/headers"
        for item in ["X:a\r\nInjected: 1", "X:a\nInjected: 1", "X:a\rb", "X\r\nY:1", "X:a\u{1B}b"] {
            let run = try await CourierProcess.run([url, item])
            #expect(run.status == 2, "\(item.debugDescription): \(run)")
            #expect(run.errors.hasPrefix("courier: error: invalid request item 'X"), "\(item.debugDescription): \(run)")
            #expect(!run.errors.contains("\r") && run.errors.filter { $0 == "\n" }.count == 1, "\(run)")
        }
        let escaped = try await CourierProcess.run([url, "X:a\r\nInjected: 1"])
        #expect(escaped.errors.contains(#"'X:a\r\nInjected: 1'"#), "\(escaped)")
        let bearer = try await CourierProcess.run(["--bearer", "t\r\nInjected: 1", url])
        #expect(bearer.status == 2 && bearer.errors.contains("--bearer"), "\(bearer)")
        #expect(server.requestsReceived == 0)
    }

    @Test("a URL's password is never printed: errors, redirects, --verbose timings")
    func passwordNotPrinted() async throws {
        let server = try await TestServer.start()
        defer { Task { try await server.shutdown() } }
        let base = "http://alice:s3cretpw@127.0.0.1:\(server.port)"
        let timedOut = try await CourierProcess.run(["--timeout", "0.5", base + "/fault/no-response"])
        #expect(timedOut.status == 2, "\(timedOut)")
        #expect(timedOut.errors.contains("http://alice@127.0.0.1:\(server.port)/fault/no-response"), "\(timedOut)")
        let redirects = try await CourierProcess.run(["--follow", "--max-redirects", "1", base + "/redirect/3"])
        #expect(redirects.status == 6, "\(redirects)")
        let verbose = try await CourierProcess.run(["--verbose", base + "/get"])
        #expect(verbose.status == 0, "\(verbose)")
        #expect(verbose.output.contains("Timings (http://alice@127.0.0.1:"), "\(verbose)")
        let badPort = try await CourierProcess.run([base.replacingOccurrences(of: "\(server.port)", with: "99999") + "/get"])
        for run in [timedOut, redirects, verbose, badPort] {
            #expect(!run.output.contains("s3cretpw") && !run.errors.contains("s3cretpw"), "\(run)")
        }
    }

    @Test("an impossible port is a bad URL like any other: exit 2")
    func badPort() async throws {
        for url in ["http://127.0.0.1:99999/get", "http://127.0.0.1:0/get", "http://127.0.0.1:abc/get", "http://127.0.0.1:-1/get"] {
            let run = try await CourierProcess.run([url])
            #expect(run.status == 2, "\(url): \(run)")
            #expect(run.errors.hasPrefix("courier: error: invalid URL"), "\(url): \(run)")
        }
    }

    @Test("a TLS failure names its reason, not BoringSSL's source paths")
    func tlsErrorWithoutBuildPaths() async throws {
        let server = try await TestServer.start()
        defer { Task { try await server.shutdown() } }
        // TLS to a plain-HTTP port: the "server hello" is an HTTP 400 response.
        let run = try await CourierProcess.run(["https://127.0.0.1:\(server.port)/get"])
        #expect(run.status == 8, "\(run)")
        #expect(run.errors.hasPrefix("courier: error: TLS handshake with 127.0.0.1 failed: wrong version number"), "\(run)")
        for fragment in [".cc:", "/.build/", "checkouts", "OPENSSL_internal", "sslError"] {
            #expect(!run.errors.contains(fragment), "\(fragment): \(run)")
        }
    }

    @Test("a --verify file that is not a certificate: exit 2 without library source locations")
    func badCertificateFileWithoutSourcePaths() async throws {
        let file = try CourierProcess.temporaryDirectory().appendingPathComponent("garbage.pem")
        try Data("not a certificate\n".utf8).write(to: file)
        let run = try await CourierProcess.run(["--verify", file.path, "https://127.0.0.1:9/get"])
        #expect(run.status == 2, "\(run)")
        #expect(run.errors.contains("--verify \(file.path)"), "\(run)")
        #expect(!run.errors.contains(".swift:"), "\(run)")
    }
}

/// `courier bench` prints URLs and error messages too: the same rules.
@Suite("courier bench hostile input")
struct BenchHostileInputCLITests {
    @Test("bench: no URL password in its header, report or JSON; a TLS failure is a 'tls' error without source paths")
    func benchCleanOutput() async throws {
        let server = try await TestServer.start()
        defer { Task { try await server.shutdown() } }
        let url = "https://alice:s3cretpw@127.0.0.1:\(server.port)/get"
        let text = try await CourierProcess.run(["bench", "-n", "1", "-c", "1", url])
        let json = try await CourierProcess.run(["bench", "-n", "1", "-c", "1", "--json", url])
        for run in [text, json] {
            #expect(run.status == 1, "\(run)")
            #expect(!run.output.contains("s3cretpw") && !run.errors.contains("s3cretpw"), "\(run)")
            for fragment in [".cc:", "/.build/", "OPENSSL_internal"] {
                #expect(!run.output.contains(fragment), "\(fragment): \(run)")
            }
        }
        #expect(text.output.contains("https://alice@127.0.0.1:\(server.port)/get"), "\(text)")
        #expect(text.output.contains("tls × 1: TLS handshake failed: wrong version number"), "\(text)")
    }
}

/// Multipart names go into quoted part headers: the same injection, one level down.
@Suite("courier multipart hostile names")
struct MultipartHostileNameCLITests {
    @Test("a multipart field or file name with a quote, CR or LF is refused (exit 2); nothing is sent")
    func multipartNameInjection() async throws {
        let server = try await TestServer.start()
        defer { Task { try await server.shutdown() } }
        let url = server.baseURL.absoluteString + "/post"
        let directory = try CourierProcess.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let oddFile = directory.appendingPathComponent("x\"\r\nX-Injected: 1")
        try Data("data".utf8).write(to: oddFile)
        let plainFile = directory.appendingPathComponent("plain.txt")
        try Data("data".utf8).write(to: plainFile)
        for arguments in [
            ["--multipart", url, "a\"\r\nX-Injected 1\r\n\r\nforged=value"],
            ["--multipart", url, "a\" filename=\"evil=value"],
            [url, "doc\r\nX-Injected 1@\(plainFile.path)"],
            [url, "doc@\(oddFile.path)"],
        ] {
            let run = try await CourierProcess.run(arguments)
            #expect(run.status == 2, "\(arguments): \(run)")
            #expect(run.errors.hasPrefix("courier: error: the multipart name '"), "\(arguments): \(run)")
        }
        #expect(server.requestsReceived == 0)
    }
}
