import CourierTestServer
import Foundation
import Testing

@Suite("/range/{n}: byte ranges with If-Range")
struct RangeRequestTests {
    static func resource(_ size: Int) -> [UInt8] {
        (0..<size).map { UInt8(ascii: "a") + UInt8($0 % 26) }
    }

    @Test("no Range: 200, the whole resource, Accept-Ranges and validators")
    func whole() async throws {
        try await TestServer.withRunning { server in
            let response = try await server.request("/range/100")
            #expect(response.status == 200)
            #expect(response.body == Self.resource(100))
            #expect(response.header("accept-ranges") == "bytes")
            #expect(response.header("etag") == "\"range100\"")
            #expect(response.header("last-modified") != nil)
            #expect(response.header("content-length") == "100")
        }
    }

    @Test(
        "a single range: 206 with Content-Range",
        arguments: [
            ("bytes=10-19", 10, 19),
            ("bytes=90-", 90, 99),
            ("bytes=-5", 95, 99),
            ("bytes=0-1000", 0, 99),
            ("bytes=0-0", 0, 0),
        ]
    )
    func partial(range: String, first: Int, last: Int) async throws {
        try await TestServer.withRunning { server in
            let response = try await server.request("/range/100", headers: [("Range", range)])
            #expect(response.status == 206)
            #expect(response.header("content-range") == "bytes \(first)-\(last)/100")
            #expect(response.header("content-length") == String(last - first + 1))
            #expect(response.body == Array(Self.resource(100)[first...last]))
        }
    }

    @Test("an unsatisfiable range: 416 with bytes */n", arguments: ["bytes=100-", "bytes=200-300", "bytes=-0"])
    func unsatisfiable(range: String) async throws {
        try await TestServer.withRunning { server in
            let response = try await server.request("/range/100", headers: [("Range", range)])
            #expect(response.status == 416)
            #expect(response.header("content-range") == "bytes */100")
        }
    }

    @Test("If-Range with the current ETag or Last-Modified keeps the range; anything else gets 200")
    func ifRange() async throws {
        try await TestServer.withRunning { server in
            let whole = try await server.request("/range/50")
            let etag = try #require(whole.header("etag"))
            let lastModified = try #require(whole.header("last-modified"))

            let byTag = try await server.request("/range/50", headers: [("Range", "bytes=5-9"), ("If-Range", etag)])
            #expect(byTag.status == 206)
            #expect(byTag.body == Array(Self.resource(50)[5...9]))

            let byDate = try await server.request("/range/50", headers: [("Range", "bytes=5-9"), ("If-Range", lastModified)])
            #expect(byDate.status == 206)

            let staleTag = try await server.request("/range/50", headers: [("Range", "bytes=5-9"), ("If-Range", "\"other\"")])
            #expect(staleTag.status == 200)
            #expect(staleTag.body == Self.resource(50))

            let weakTag = try await server.request("/range/50", headers: [("Range", "bytes=5-9"), ("If-Range", "W/\(etag)")])
            #expect(weakTag.status == 200)

            let oldDate = try await server.request(
                "/range/50",
                headers: [("Range", "bytes=5-9"), ("If-Range", "Mon, 01 Jan 1990 00:00:00 GMT")]
            )
            #expect(oldDate.status == 200)
        }
    }

    @Test("sizes outside (0, 102400] are 404")
    func outOfBounds() async throws {
        try await TestServer.withRunning { server in
            let empty = try await server.request("/range/0")
            let tooLarge = try await server.request("/range/102401")
            #expect(empty.status == 404)
            #expect(tooLarge.status == 404)
        }
    }

    @Test("resuming a download: the parts put together equal the whole")
    func resume() async throws {
        try await TestServer.withRunning { server in
            let size = 100 * 1024
            var assembled: [UInt8] = []
            while assembled.count < size {
                let response = try await server.request(
                    "/range/\(size)?chunk_size=1000",
                    headers: [("Range", "bytes=\(assembled.count)-\(assembled.count + 30_000)")]
                )
                #expect(response.status == 206)
                assembled += try #require(response.body)
            }
            #expect(assembled == Self.resource(size))
        }
    }
}
