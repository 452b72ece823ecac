import CourierTestServer
import Foundation
import Testing

/// `courier bench` run as a subprocess against an in-process test server.
@Suite struct BenchCommandTests {
    @Test func sendsEveryRequestAndReportsRatesAndPercentiles() async throws {
        let server = try await TestServer.start()
        let run = try await CourierProcess.run(["bench", server.baseURL.absoluteString + "/get", "-n", "200", "-c", "8"])
        let received = server.requestsReceived
        try await server.shutdown()
        #expect(run.status == 0, "\(run)")
        #expect(run.output.contains("200 requests in "), "\(run)")
        #expect(run.output.contains(", 0 errors"), "\(run)")
        #expect(run.output.contains("Requests/s:"), "\(run)")
        #expect(run.output.contains("Transfer:"), "\(run)")
        for percentile in ["p50 ", "p90 ", "p99 ", "p99.9 ", "max "] {
            #expect(run.output.contains(percentile), "no \(percentile)\n\(run)")
        }
        #expect(run.output.contains("Status:      200 × 200"), "\(run)")
        #expect(received >= 200)
    }

    @Test func jsonReportHasEveryField() async throws {
        let server = try await TestServer.start()
        let run = try await CourierProcess.run(["bench", server.baseURL.absoluteString + "/get", "-n", "50", "-c", "4", "--json"])
        try await server.shutdown()
        #expect(run.status == 0, "\(run)")
        let report = try run.json()
        #expect(report["requests"] as? Int == 50)
        #expect(report["errors"] as? Int == 0)
        #expect(report["concurrency"] as? Int == 4)
        #expect(report["method"] as? String == "GET")
        #expect((report["requestsPerSecond"] as? Double ?? 0) > 0)
        #expect((report["bytesReceived"] as? Int ?? 0) > 50 * 100, "each /get answer is a few hundred bytes")
        #expect(report["bytesPerSecond"] is Double)
        #expect(report["durationSeconds"] is Double)
        #expect((report["statusCodes"] as? [String: Int])?["200"] == 50)
        #expect((report["errorsByKind"] as? [String: Int])?.isEmpty == true)
        let latency = try #require(report["latencyMilliseconds"] as? [String: Double])
        for key in ["p50", "p90", "p99", "p99.9", "max", "min", "mean"] {
            #expect((latency[key] ?? 0) > 0, "latency \(key)")
        }
        #expect((latency["p50"] ?? 0) <= (latency["p99"] ?? 0))
        #expect((latency["p99"] ?? 0) <= (latency["max"] ?? 0))
    }

    @Test func methodAndHeadersAreSent() async throws {
        let server = try await TestServer.start()
        let base = server.baseURL.absoluteString
        // /post answers 405 to anything but POST; /bearer answers 401 without the token.
        let post = try await CourierProcess.run(["bench", base + "/post", "-n", "10", "-c", "2", "-m", "POST", "-d", "hello"])
        let get = try await CourierProcess.run(["bench", base + "/post", "-n", "10", "-c", "2"])
        let bearer = try await CourierProcess.run(
            ["bench", base + "/bearer", "-n", "10", "-c", "2", "-H", "Authorization: Bearer token"])
        let noBearer = try await CourierProcess.run(["bench", base + "/bearer", "-n", "10", "-c", "2"])
        try await server.shutdown()
        #expect(post.output.contains("Status:      200 × 10"), "\(post)")
        #expect(get.output.contains("Status:      405 × 10"), "\(get)")
        #expect(bearer.output.contains("Status:      200 × 10"), "\(bearer)")
        #expect(noBearer.output.contains("Status:      401 × 10"), "\(noBearer)")
        // Error statuses are responses, not errors.
        #expect(get.status == 0 && noBearer.status == 0)
    }

    @Test func durationRunsUntilTimeIsUp() async throws {
        let server = try await TestServer.start()
        let run = try await CourierProcess.run(["bench", server.baseURL.absoluteString + "/get", "--duration", "0.5", "-c", "2", "--json"])
        let received = server.requestsReceived
        try await server.shutdown()
        #expect(run.status == 0, "\(run)")
        let report = try run.json()
        let requests = try #require(report["requests"] as? Int)
        #expect(requests > 0)
        #expect(received >= requests)
    }

    @Test(arguments: [
        (["bench"], "Missing expected argument '<url>'"),
        (["bench", "http://127.0.0.1:1/get", "-n", "0"], "-n must be at least 1"),
        (["bench", "http://127.0.0.1:1/get", "-c", "0"], "-c must be at least 1"),
        // One task per request in flight: a huge -c took memory until the process crashed.
        (["bench", "http://127.0.0.1:1/get", "-c", "9223372036854775807", "-n", "9223372036854775807"], "-c must be at most 10000"),
        (["bench", "not a url"], "is not an http or https URL"),
        (["bench", "ftp://example.com/x"], "is not an http or https URL"),
        (["bench", "http://127.0.0.1:1/get", "-H", "NoColon"], "has no ':'"),
        (["bench", "http://127.0.0.1:1/get", "-n", "5", "--duration", "1"], "either -n or --duration"),
        (["bench", "http://127.0.0.1:1/get", "--cacert", "/nonexistent/ca.pem"], "Cannot read the CA file"),
    ])
    func badInputIsRefusedWithAMessage(arguments: [String], message: String) async throws {
        let run = try await CourierProcess.run(arguments)
        #expect(run.status != 0, "\(run)")
        #expect(run.errors.contains(message), "\(run)")
        #expect(!run.output.contains("requests in"), "nothing was sent")
    }

    @Test func httpsWithTheTestCATrustedAndWithout() async throws {
        let server = try await TestServer.start(.init(tls: .valid))
        let directory = try CourierProcess.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let caFile = directory.appendingPathComponent("root-ca.pem")
        try Data(server.certificateAuthority.rootCertificatePEM.utf8).write(to: caFile)
        let url = "https://localhost:\(server.port)/get"
        let trusted = try await CourierProcess.run(["bench", url, "-n", "20", "-c", "2", "--cacert", caFile.path])
        let untrusted = try await CourierProcess.run(["bench", url, "-n", "5", "-c", "1"])
        try await server.shutdown()
        #expect(trusted.status == 0, "\(trusted)")
        #expect(trusted.output.contains("Status:      200 × 20"), "\(trusted)")
        #expect(untrusted.status == 1, "\(untrusted)")
        #expect(untrusted.output.contains("tls × 5: The certificate for this server is invalid"), "\(untrusted)")
    }

    @Test func aClosedPortCountsErrorsAndExitsNonZero() async throws {
        let closed = try RefusingPort()
        let run = try await CourierProcess.run(["bench", closed.baseURL + "/get", "-n", "20", "-c", "4"])
        #expect(run.status == 1, "\(run)")
        #expect(run.output.contains("20 requests in "), "\(run)")
        #expect(run.output.contains("20 errors"), "\(run)")
        #expect(run.output.contains("connect × 20: Could not connect to the server"), "\(run)")
        #expect(run.errors.contains("20 of 20 requests failed"), "\(run)")
    }
}
