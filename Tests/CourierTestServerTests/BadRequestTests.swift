import CourierTestServer
import Foundation
import Testing

@Suite("Malformed requests get 400 and a closed connection")
struct BadRequestTests {
    static let badRequests: [String] = [
        "GARBAGE\r\n\r\n",
        "GET /get HTTP/9.x\r\nHost: a\r\n\r\n",
        "GET /get\r\nHost: a\r\n\r\n",
        "GET /get HTTP/1.1\r\nHost: a\r\nBad Header Without Colon\r\n\r\n",
        "POST /post HTTP/1.1\r\nHost: a\r\nContent-Length: abc\r\n\r\n",
        "POST /post HTTP/1.1\r\nHost: a\r\nContent-Length: -5\r\n\r\n",
        "POST /post HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd",
        "POST /post HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
    ]

    @Test("malformed request → HTTP/1.1 400, then close", arguments: badRequests)
    func malformed(request: String) async throws {
        try await TestServer.withRunning { server in
            let exchange = try await RawHTTPClient.exchange(port: server.port, request)
            #expect(exchange.text.hasPrefix("HTTP/1.1 400 Bad Request\r\n"))
            #expect(exchange.end == .closed)
            // The server is still fine.
            #expect(try await server.request("/get").status == 200)
        }
    }

    @Test("a request header block of 1 MiB → 400, then close")
    func hugeRequestHeaders() async throws {
        try await TestServer.withRunning { server in
            var request = "GET /get HTTP/1.1\r\nHost: a\r\n"
            for index in 0..<1024 {
                request += "X-Filler-\(index): \(String(repeating: "b", count: 1000))\r\n"
            }
            request += "\r\n"
            let exchange = try await RawHTTPClient.exchange(port: server.port, request)
            #expect(exchange.text.hasPrefix("HTTP/1.1 400 Bad Request\r\n"))
            #expect(exchange.end == .closed || exchange.end == .reset)
            #expect(try await server.request("/get").status == 200)
        }
    }

    @Test("a body over the 64 MiB buffering limit is refused with 413")
    func tooLarge() async throws {
        try await TestServer.withRunning { server in
            let exchange = try await RawHTTPClient.exchange(
                port: server.port,
                "POST /post HTTP/1.1\r\nHost: a\r\nContent-Length: \(128 * 1024 * 1024)\r\nExpect: 100-continue\r\n\r\n"
            )
            #expect(exchange.text.hasPrefix("HTTP/1.1 413 Payload Too Large\r\n"))
            #expect(exchange.end == .closed)
        }
    }

    @Test("an unsupported expectation is refused with 417")
    func unsupportedExpectation() async throws {
        try await TestServer.withRunning { server in
            let response = try await server.request("/post", method: "POST", headers: [("Expect", "teapot")], body: [])
            #expect(response.status == 417)
        }
    }

    @Test("a client still sending a refused body receives the 413, then EOF")
    func tooLargeWhileSending() async throws {
        try await TestServer.withRunning { server in
            let size = 70 * 1024 * 1024
            let exchange = try await Task.detached {
                let fd = try RawHTTPClient.connect(host: server.host, port: server.port, timeout: 30)
                defer { close(fd) }
                try RawHTTPClient.sendAll(fd, Array("POST /post HTTP/1.1\r\nHost: a\r\nContent-Length: \(size)\r\n\r\n".utf8))
                let block = [UInt8](repeating: 0x61, count: 1024 * 1024)
                for _ in 0..<70 {
                    try RawHTTPClient.sendAll(fd, block)
                }
                shutdown(fd, Int32(SHUT_WR))
                return try RawHTTPClient.readAll(fd, stopWhenComplete: false)
            }.value
            #expect(exchange.text.hasPrefix("HTTP/1.1 413 Payload Too Large\r\n"))
            #expect(exchange.end == .closed)
        }
    }
}
