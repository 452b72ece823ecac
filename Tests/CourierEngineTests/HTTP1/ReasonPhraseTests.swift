@testable import CourierEngine
import CourierTestServer
import Foundation
import NIOCore
import NIOHTTP1
import Testing

/// The server's own reason phrase reaches the response head (NIO's decoder alone keeps only
/// the code), and anything doubtful falls back to the standard phrase, never a wrong one.
@Suite("Reason phrase")
struct ReasonPhraseTests {
    private static func collect(
        _ script: HostileScript, tls: Bool = false, _ request: (URL) -> EngineRequest = { EngineRequest(url: $0) }
    ) async throws -> [CollectedResponse] {
        try await collect(script, tls: tls, count: 1, request)
    }

    private static func collect(
        _ script: HostileScript, tls: Bool = false, count: Int, _ request: (URL) -> EngineRequest = { EngineRequest(url: $0) }
    ) async throws -> [CollectedResponse] {
        var configuration = EngineConfiguration()
        if tls {
            configuration.tls.trustsSystemRoots = false
            configuration.tls.additionalTrustRootsDER = [try TestCertificateAuthority.shared.rootCertificateDER]
        }
        let engine = try HTTPEngine(configuration: configuration)
        let server = try await HostileServer.start(script, tls: tls ? .valid : nil)
        var responses: [CollectedResponse] = []
        do {
            for _ in 0..<count {
                responses.append(try await engine.collect(request(server.url("/phrase"))))
            }
        } catch {
            await engine.shutdown()
            try await server.shutdown()
            throw error
        }
        await engine.shutdown()
        try await server.shutdown()
        return responses
    }

    @Test("a custom phrase arrives in the head, also for a code NIO has no phrase for")
    func customPhraseArrives() async throws {
        let fine = try await Self.collect(.answer(status: "200 Fine Thanks", headers: ["Content-Length: 2"], body: "ok"))
        #expect(fine.first?.head.status.code == 200)
        #expect(fine.first?.head.status.reasonPhrase == "Fine Thanks")
        #expect(fine.first.map { String(buffer: $0.body) } == "ok")

        let teapot = try await Self.collect(
            .answer(status: "418 I'm a teapot-ish custom text", headers: ["Content-Length: 0"]))
        #expect(teapot.first?.head.status.code == 418)
        #expect(teapot.first?.head.status.reasonPhrase == "I'm a teapot-ish custom text")

        let unknown = try await Self.collect(.answer(status: "299 Whatever\tWorks", headers: ["Content-Length: 0"]))
        #expect(unknown.first?.head.status.code == 299)
        #expect(unknown.first?.head.status.reasonPhrase == "Whatever\tWorks")
    }

    @Test("over TLS (ALPN falls back to HTTP/1.1) the phrase arrives too")
    func customPhraseOverTLS() async throws {
        let responses = try await Self.collect(
            .answer(status: "404 Not Here, Try Later", headers: ["Content-Length: 0"]), tls: true)
        #expect(responses.first?.head.status.code == 404)
        #expect(responses.first?.head.status.reasonPhrase == "Not Here, Try Later")
    }

    @Test("every response on a kept-alive connection gets its phrase")
    func keptAliveConnection() async throws {
        let responses = try await Self.collect(
            .answer(status: "200 Fine Thanks", headers: ["Content-Length: 2"], body: "ok", afterwards: .repeatSteps), count: 3)
        #expect(responses.count == 3)
        #expect(responses.dropFirst().allSatisfy { $0.metrics.isReusedConnection }, "one connection")
        #expect(responses.map(\.head.status.reasonPhrase) == ["Fine Thanks", "Fine Thanks", "Fine Thanks"])
    }

    @Test("the standard phrase keeps NIO's status value")
    func standardPhraseIsNIOsStatus() async throws {
        let responses = try await Self.collect(.answer(status: "200 OK", headers: ["Content-Length: 0"]))
        #expect(responses.first?.head.status == .ok)
    }

    @Test(
        "a hostile, oversized or control-character status line falls back to the standard phrase",
        arguments: [
            "200 Fine\u{7F}Thanks",  // DEL
            "200 Tr\u{E8}s Bien",  // obs-text (UTF-8)
            "200 \u{1B}[31mRed",  // an escape sequence
            "200 " + String(repeating: "x", count: 2000),  // longer than the 1 KiB bound
            "200 " + String(repeating: "x", count: 100 * 1024),  // 100 KiB
            "200 Fine\u{0}Thanks",  // NUL
            "200 Fine\u{8}\u{8}\u{8}\u{8}Evil",  // backspaces
        ])
    func doubtfulPhraseFallsBack(status: String) async throws {
        let responses = try await Self.collect(.answer(status: status, headers: ["Content-Length: 2"], body: "ok"))
        #expect(responses.first?.head.status.code == 200)
        #expect(responses.first?.head.status.reasonPhrase == "OK")
    }

    @Test("100 Continue, then the final head in a later read: the final head's own phrase")
    func continueThenFinal() async throws {
        let script = HostileScript([
            .readHead, .write("HTTP/1.1 100 Go Ahead\r\n\r\n"), .readBody,
            .head("201 Made It", ["Content-Length: 2"]), .write("ok"),
        ])
        let responses = try await Self.collect(script) { url in
            var request = EngineRequest(url: url)
            request.method = "POST"
            request.headers.add(name: "Expect", value: "100-continue")
            request.body = .bytes(ByteBuffer(string: "hello"))
            return request
        }
        #expect(responses.first?.head.status.code == 201)
        #expect(responses.first?.head.status.reasonPhrase == "Made It")
    }

    @Test("an interim head and the final one in the same read: the standard phrase, not the interim one")
    func interimAndFinalInOneRead() async throws {
        let script = HostileScript([
            .readHead, .readBody,
            .write("HTTP/1.1 103 Hints Here\r\nLink: </a.css>\r\n\r\nHTTP/1.1 200 Fine Thanks\r\nContent-Length: 2\r\n\r\nok"),
        ])
        let responses = try await Self.collect(script)
        #expect(responses.first?.head.status.code == 200)
        #expect(responses.first?.head.status.reasonPhrase == "OK")
    }

    // MARK: - The status line reader, with plain values

    @Test("the status line reader: custom phrases, standard ones, and what it refuses")
    func statusLineReader() {
        func read(_ text: String) -> (code: Int, reasonPhrase: String)? {
            StatusLineReasonPhrase.customPhrase(atStartOf: Array(text.utf8))
        }
        #expect(read("HTTP/1.1 200 Fine Thanks\r\nContent-Length: 0\r\n\r\n").map { "\($0.code) \($0.reasonPhrase)" } == "200 Fine Thanks")
        #expect(read("HTTP/1.0 503 Back Soon \r\n").map(\.reasonPhrase) == "Back Soon ")
        #expect(read("HTTP/1.1 299 Whatever\r\n").map(\.code) == 299)
        #expect(read("HTTP/1.1 200 OK\r\n") == nil, "standard")
        #expect(read("HTTP/1.1 404 Not Found\r\n") == nil, "standard")
        #expect(read("HTTP/1.1 200 \r\n") == nil, "empty phrase")
        #expect(read("HTTP/1.1 200\r\n") == nil, "no phrase")
        #expect(read("HTTP/1.1 200 Fine Thanks") == nil, "no line end yet")
        #expect(read("HTTP/1.1 200 Fine Thanks\r") == nil, "no line end yet")
        #expect(read("HTTP/1.1 200 Fine Thanks\n") == nil, "bare LF")
        #expect(read("HTTP/1.1 200 Fine\u{0}Thanks\r\n") == nil, "NUL")
        #expect(read("HTTP/1.1 200 Fine\u{7F}Thanks\r\n") == nil, "DEL")
        #expect(read("HTTP/1.1 200 Tr\u{E8}s Bien\r\n") == nil, "obs-text")
        #expect(read("HTTP/1.1 20x Fine\r\n") == nil)
        #expect(read("HTTP/11 200 Fine\r\n") == nil)
        #expect(read("xHTTP/1.1 200 Fine\r\n") == nil, "only at the start")
        #expect(read("ok\r\nHTTP/1.1 200 Fine\r\n") == nil, "only at the start")
        #expect(read("") == nil)
        let longest = "HTTP/1.1 200 " + String(repeating: "x", count: StatusLineReasonPhrase.maximumLineLength - 15) + "\r\n"
        #expect(read(longest)?.reasonPhrase.utf8.count == StatusLineReasonPhrase.maximumLineLength - 15)
        #expect(read("HTTP/1.1 200 " + String(repeating: "x", count: StatusLineReasonPhrase.maximumLineLength) + "\r\n") == nil)
    }
}
