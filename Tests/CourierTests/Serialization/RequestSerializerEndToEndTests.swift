import CourierEngine
import CourierTestServer
import Foundation
import NIOCore
import NIOHTTP1
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What the test server received from each request serializer (httpbin echo), sent through
/// `HTTPEngine` as the session layer will.
@Suite struct RequestSerializerEndToEndTests {
    static func send(_ build: (String) throws -> URLRequest) async throws -> JSONValue {
        let server = try await TestServer.start()
        let engine = try HTTPEngine()
        do {
            let request = try build(server.baseURL.absoluteString)
            let url = try #require(request.url)
            var headers = HTTPHeaders()
            for (name, value) in (request.allHTTPHeaderFields ?? [:]).sorted(by: { $0.key < $1.key }) {
                headers.add(name: name, value: value)
            }
            let engineRequest = EngineRequest(
                method: request.httpMethod ?? "GET", url: url, headers: headers, body: request.httpBody.map(RequestBody.data))
            let response = try await engine.collect(engineRequest)
            await engine.shutdown()
            try await server.shutdown()
            return try JSONValue(parsing: Data(response.body.readableBytesView))
        } catch {
            await engine.shutdown()
            try? await server.shutdown()
            throw error
        }
    }

    @Test func queryStringReachesArgs() async throws {
        let echo = try await Self.send { base in
            try HTTPRequestSerializer().request(
                method: "GET", urlString: base + "/get", parameters: ["q": "a b&c/?", "n": ["x": 1], "l": [1, 2]])
        }
        #expect(echo["args"]?["q"] == "a b&c/?")
        #expect(echo["args"]?["n[x]"] == "1")
        #expect(echo["args"]?["l[]"] == ["1", "2"])
    }

    @Test func formBodyReachesForm() async throws {
        let serializer = HTTPRequestSerializer()
        serializer.setAuthorizationHeader(username: "user", password: "pass")
        let echo = try await Self.send { base in
            try serializer.request(method: "POST", urlString: base + "/post", parameters: ["name": "Zoë", "flag": true, "e": .null])
        }
        #expect(echo["form"]?["name"] == "Zoë")
        #expect(echo["form"]?["flag"] == "1")
        #expect(echo["headers"]?["Content-Type"] == "application/x-www-form-urlencoded")
        #expect(echo["headers"]?["Authorization"] == "Basic dXNlcjpwYXNz")
        #expect(echo["headers"]?["Accept-Language"]?.stringValue?.contains(";q=1") == true)
        #expect(echo["headers"]?["User-Agent"]?.stringValue?.contains("(Linux; ") == true)
    }

    @Test func jsonBodyReachesJSON() async throws {
        let echo = try await Self.send { base in
            try JSONRequestSerializer().request(
                method: "PUT", urlString: base + "/put", parameters: ["id": 9_007_199_254_740_993, "tags": ["a"], "ok": false])
        }
        #expect(echo["json"] == ["id": 9_007_199_254_740_993, "tags": ["a"], "ok": false])
        #expect(echo["headers"]?["Content-Type"] == "application/json")
    }

    @Test func propertyListBodyReachesData() async throws {
        let echo = try await Self.send { base in
            try PropertyListRequestSerializer().request(method: "POST", urlString: base + "/post", parameters: ["k": "v"])
        }
        #expect(echo["headers"]?["Content-Type"] == "application/x-plist")
        #expect(try propertyList(echoedIn: echo) == ["k": "v"])
    }
}
