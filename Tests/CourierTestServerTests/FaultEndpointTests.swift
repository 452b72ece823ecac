import CourierTestServer
import Foundation
import Testing

@Suite("Fault endpoints misbehave at the socket level")
struct FaultEndpointTests {
    static let pattern: [UInt8] = (0..<200_000).map { UInt8(ascii: "a") + UInt8($0 % 26) }

    @Test("short-body: fewer bytes than Content-Length, then EOF")
    func shortBody() async throws {
        try await TestServer.withRunning { server in
            let exchange = try await server.exchange("/fault/short-body?length=1000&sent=400")
            #expect(exchange.end == .closed)
            let response = try #require(exchange.response)
            #expect(response.status == 200)
            #expect(response.header("content-length") == "1000")
            #expect(response.rawBody == Array(Self.pattern.prefix(400)))
        }
    }

    @Test("reset-mid-body: part of the body, then ECONNRESET")
    func resetMidBody() async throws {
        try await TestServer.withRunning { server in
            let exchange = try await server.exchange("/fault/reset-mid-body")
            #expect(exchange.end == .reset)
            let response = try #require(exchange.response)
            #expect(response.header("content-length") == "100000")
            #expect(response.rawBody.count <= 1000)
            #expect(response.rawBody == Array(Self.pattern.prefix(response.rawBody.count)))
        }
    }

    @Test("incomplete-headers: no blank line within a second, connection left open")
    func incompleteHeaders() async throws {
        try await TestServer.withRunning { server in
            let exchange = try await server.exchange("/fault/incomplete-headers", timeout: 1)
            #expect(exchange.end == .timedOut)
            #expect(exchange.text.hasPrefix("HTTP/1.1 200 OK\r\n"))
            #expect(!exchange.text.contains("\r\n\r\n"))
        }
    }

    @Test("stall-body/{n}: n bytes of a longer body, then silence")
    func stallBody() async throws {
        try await TestServer.withRunning { server in
            let exchange = try await server.exchange("/fault/stall-body/300", timeout: 1)
            #expect(exchange.end == .timedOut)
            let response = try #require(exchange.response)
            #expect(response.header("content-length") == "601")
            #expect(response.rawBody == Array(Self.pattern.prefix(300)))
        }
    }

    @Test("bad-chunked: a chunk-size line that is not hexadecimal")
    func badChunked() async throws {
        try await TestServer.withRunning { server in
            let exchange = try await server.exchange("/fault/bad-chunked")
            #expect(exchange.end == .closed)
            let response = try #require(exchange.response)
            #expect(response.header("transfer-encoding") == "chunked")
            #expect(response.body == nil)  // the de-chunker rejects it
            #expect(String(decoding: response.rawBody, as: UTF8.self).hasPrefix("5\r\nhello\r\nzz\r\n"))
        }
    }

    @Test("close-delimited: no length, no chunking, body ends at close", arguments: ["1.0", "1.1"])
    func closeDelimited(version: String) async throws {
        try await TestServer.withRunning { server in
            let exchange = try await server.exchange("/fault/close-delimited?bytes=50000&version=\(version)")
            #expect(exchange.end == .closed)
            let response = try #require(exchange.response)
            #expect(response.statusLine == "HTTP/\(version) 200 OK")
            #expect(response.header("content-length") == nil)
            #expect(response.header("transfer-encoding") == nil)
            #expect(response.rawBody == Array(Self.pattern.prefix(50000)))
        }
    }

    @Test("huge-headers: a header block of about 1 MiB")
    func hugeHeaders() async throws {
        try await TestServer.withRunning { server in
            let exchange = try await server.exchange("/fault/huge-headers")
            #expect(exchange.end == .closed)
            let end = try #require(ParsedResponse.headerEnd(exchange.bytes))
            #expect(end > 1024 * 1024)
            #expect(Array(exchange.bytes[(end + 4)...]) == Array("ok".utf8))
        }
    }

    @Test("continue: 100 Continue, then the final response")
    func continueFirst() async throws {
        try await TestServer.withRunning { server in
            let exchange = try await server.exchange("/fault/continue", method: "POST", body: Array("x".utf8))
            #expect(exchange.text.hasPrefix("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\n"))
            let response = try #require(exchange.response)
            #expect(response.status == 200)
            #expect(response.string("data") == "x")
        }
    }

    @Test("redirect-loop: redirects to itself")
    func redirectLoop() async throws {
        try await TestServer.withRunning { server in
            let response = try await server.request("/fault/redirect-loop")
            #expect(response.status == 302)
            #expect(response.header("location") == "/fault/redirect-loop")
        }
    }

    @Test("no-response: the request is read and never answered")
    func noResponse() async throws {
        try await TestServer.withRunning { server in
            let exchange = try await server.exchange("/fault/no-response", timeout: 1)
            #expect(exchange.end == .timedOut)
            #expect(exchange.bytes.isEmpty)
            #expect(server.requestsReceived == 1)
        }
    }
}
