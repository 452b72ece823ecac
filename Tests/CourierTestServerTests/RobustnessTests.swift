import CourierTestServer
import Foundation
import Testing

@Suite("The server survives whatever clients send")
struct RobustnessTests {
    /// A small deterministic generator, so a failure can be replayed.
    struct SplitMix: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    static let seeds: [[UInt8]] = [
        "GET /get?a=1 HTTP/1.1\r\nHost: a\r\n\r\n",
        "POST /post HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\nContent-Length: 7\r\n\r\n{\"a\":1}",
        "POST /post HTTP/1.1\r\nHost: a\r\nContent-Type: multipart/form-data; boundary=b\r\nContent-Length: 44\r\n\r\n--b\r\nContent-Disposition: form-data; name=x\r\n\r\n1\r\n--b--",
        "PUT /upload HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
        "GET /stream/3 HTTP/1.1\r\nHost: a\r\n\r\nGET /delay/0.05 HTTP/1.1\r\nHost: a\r\n\r\n",
        "GET /drip?duration=0.05&numbytes=3 HTTP/1.1\r\nHost: a\r\n\r\nGET /range/10 HTTP/1.1\r\nRange: bytes=2-4\r\n\r\n",
        "POST /digest-auth/auth/u/p HTTP/1.1\r\nAuthorization: Digest username=\"u\", nonce=\"x\r\nContent-Length: 1\r\n\r\nx",
        "GET /fault/continue HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\nhi",
        "GET /fault/short-body HTTP/1.1\r\n\r\nGET /get HTTP/1.1\r\n\r\n",
        "GET /drip?code=100&duration=0 HTTP/1.1\r\n\r\nGET /status/101 HTTP/1.1\r\n\r\n",
    ].map { Array($0.utf8) }

    static func mutate(_ input: [UInt8], using generator: inout SplitMix) -> [UInt8] {
        var bytes = input
        switch generator.next() % 5 {
        case 0:
            // Flip a few bytes.
            for _ in 0..<(1 + Int(generator.next() % 4)) where !bytes.isEmpty {
                bytes[Int(generator.next() % UInt64(bytes.count))] = UInt8(truncatingIfNeeded: generator.next())
            }
        case 1:
            bytes = Array(bytes.prefix(Int(generator.next() % UInt64(bytes.count + 1))))
        case 2:
            // Insert random bytes.
            let position = Int(generator.next() % UInt64(bytes.count + 1))
            let noise = (0..<Int(generator.next() % 16)).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
            bytes.insert(contentsOf: noise, at: position)
        case 3:
            // Pure garbage.
            bytes = (0..<Int(generator.next() % 200)).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
        default:
            // Garbage after a valid request.
            bytes += (0..<Int(generator.next() % 40)).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
        }
        return bytes
    }

    @Test("300 mutated and garbage requests, then the server still answers")
    func fuzz() async throws {
        try await TestServer.withRunning { server in
            var generator = SplitMix(state: 2026)
            let inputs = (0..<300).map { index in
                Self.mutate(Self.seeds[index % Self.seeds.count], using: &generator)
            }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (index, input) in inputs.enumerated() {
                    if index >= 8 { try await group.next() }
                    group.addTask {
                        let exchange = try await RawHTTPClient.exchange(port: server.port, request: input, timeout: 3, halfClose: true)
                        // Every reply that starts must start with a status line.
                        if !exchange.bytes.isEmpty {
                            #expect(exchange.text.hasPrefix("HTTP/1."), "input \(index): \(exchange.text.prefix(40))")
                        }
                    }
                }
                try await group.waitForAll()
            }
            let response = try await server.request("/get")
            #expect(response.status == 200)
            #expect(server.connectionsAccepted == 301)
        }
    }

    @Test("HTTP/1.0 requests get HTTP/1.0 responses ended by close")
    func http10() async throws {
        try await TestServer.withRunning { server in
            let exchange = try await RawHTTPClient.exchange(port: server.port, "GET /stream/2 HTTP/1.0\r\n\r\n")
            #expect(exchange.end == .closed)
            #expect(exchange.text.hasPrefix("HTTP/1.0 200 OK\r\n"))
            let response = try #require(exchange.response)
            #expect(response.header("transfer-encoding") == nil)
            #expect(response.bodyText.split(separator: "\n").count == 2)
        }
    }

    @Test("absolute-form request targets are served like origin-form ones")
    func absoluteForm() async throws {
        try await TestServer.withRunning { server in
            let response = try await server.request("http://example.test/get?via=proxy")
            #expect(response.status == 200)
            #expect(response.object("args")?["via"] as? String == "proxy")
            #expect(response.string("url") == "http://\(server.authority)/get?via=proxy")
        }
    }
}
