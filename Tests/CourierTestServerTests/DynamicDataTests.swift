import CourierTestServer
import Foundation
import Testing

@Suite("Generated data: bytes, streams, drip and delay")
struct DynamicDataTests {
    @Test("/bytes/{n}?seed= returns the same bytes as httpbin (CPython's Mersenne Twister)")
    func seededBytes() async throws {
        try await TestServer.withRunning { server in
            let response = try await server.request("/bytes/10?seed=42")
            #expect(response.status == 200)
            #expect(response.header("content-type") == "application/octet-stream")
            // random.seed(42); [random.randint(0, 255) for _ in range(10)] in CPython 3.11
            #expect(response.body == [57, 12, 140, 125, 114, 71, 52, 44, 216, 16])
            let zero = try await server.request("/bytes/5?seed=0")
            #expect(zero.body == [197, 215, 20, 132, 248])
            let big = try await server.request("/bytes/5?seed=1099511627781")  // 2**40 + 5: two key words
            #expect(big.body == [137, 14, 23, 84, 40])
        }
    }

    @Test("/bytes/{n} without a seed: n random bytes, capped at 100 KiB")
    func randomBytes() async throws {
        try await TestServer.withRunning { server in
            let first = try await server.request("/bytes/1024")
            let second = try await server.request("/bytes/1024")
            #expect(first.body?.count == 1024)
            #expect(first.body != second.body)
            let capped = try await server.request("/bytes/500000")
            #expect(capped.body?.count == 100 * 1024)
        }
    }

    @Test("/stream-bytes/{n} is chunked in chunk_size pieces and matches /bytes for a seed")
    func streamBytes() async throws {
        try await TestServer.withRunning { server in
            let response = try await server.request("/stream-bytes/1000?seed=7&chunk_size=300")
            #expect(response.header("transfer-encoding") == "chunked")
            #expect(response.header("content-length") == nil)
            let raw = String(decoding: response.rawBody, as: UTF8.self)
            #expect(raw.hasPrefix("12c\r\n"))  // 300 in hex
            let plain = try await server.request("/bytes/1000?seed=7")
            #expect(response.body == plain.body)
            #expect(response.body?.count == 1000)
        }
    }

    @Test("/stream/{n}: n JSON lines with ids")
    func stream() async throws {
        try await TestServer.withRunning { server in
            let response = try await server.request("/stream/5?k=v")
            #expect(response.header("transfer-encoding") == "chunked")
            let lines = response.bodyText.split(separator: "\n")
            #expect(lines.count == 5)
            for (index, line) in lines.enumerated() {
                let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
                #expect(object["id"] as? Int == index)
                #expect((object["args"] as? [String: Any])?["k"] as? String == "v")
                #expect(Set(object.keys) == ["id", "url", "args", "headers", "origin"])
            }
            let capped = try await server.request("/stream/1000")
            #expect(capped.bodyText.split(separator: "\n").count == 100)
        }
    }

    @Test("/drip paces numbytes over duration, after delay, with the given status")
    func drip() async throws {
        try await TestServer.withRunning { server in
            let clock = ContinuousClock()
            var response: ParsedResponse?
            let elapsed = try await clock.measure {
                response = try await server.request("/drip?duration=0.5&numbytes=5&code=201&delay=0.2")
            }
            let drip = try #require(response)
            #expect(drip.status == 201)
            #expect(drip.header("content-length") == "5")
            #expect(drip.body == Array("*****".utf8))
            #expect(elapsed >= .milliseconds(500))
            let invalid = try await server.request("/drip?numbytes=0")
            #expect(invalid.status == 400)
            let informational = try await server.request("/drip?code=100&duration=0")
            #expect(informational.status == 400)
        }
    }

    @Test("/delay/{s} answers after s seconds with the request dictionary")
    func delay() async throws {
        try await TestServer.withRunning { server in
            let clock = ContinuousClock()
            var response: ParsedResponse?
            let elapsed = try await clock.measure {
                response = try await server.request("/delay/0.3?a=b", method: "POST", body: Array("x=1".utf8))
            }
            #expect(elapsed >= .milliseconds(300))
            let delayed = try #require(response)
            #expect(delayed.status == 200)
            #expect(Set(delayed.json?.keys.map { $0 } ?? []) == ["url", "args", "form", "data", "origin", "headers", "files"])
            #expect(delayed.string("data") == "x=1")
        }
    }

    @Test("/download/{n}: n bytes of the abc…z pattern with Content-Length (not httpbin)")
    func download() async throws {
        try await TestServer.withRunning { server in
            let size = 3_000_001
            let response = try await server.request("/download/\(size)")
            #expect(response.status == 200)
            #expect(response.header("content-length") == String(size))
            #expect(response.body == (0..<size).map { UInt8(ascii: "a") + UInt8($0 % 26) })
            let head = try await server.exchange("/download/\(size)", method: "HEAD")
            #expect(head.response?.header("content-length") == String(size))
            #expect(head.response?.rawBody.isEmpty == true)
            let invalid = try await server.request("/download/-1")
            #expect(invalid.status == 400)
        }
    }
}
