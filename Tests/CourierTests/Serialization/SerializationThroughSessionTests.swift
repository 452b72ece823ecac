import Courier
import CourierTestServer
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// End-to-end checks through `HTTPSessionManager`: what each request serializer put
/// on the wire as the server received it, and each response serializer on real responses.
@Suite("Serializers through HTTPSessionManager")
struct SerializationThroughSessionTests {
    @Test func httpSerializerFormBodyAndQuery() async throws {
        try await TestServer.withRunning { server in
            let manager = HTTPSessionManager(baseURL: server.baseURL)
            let (post, _) = try await manager.post("post", parameters: ["a": ["b": 1], "c": [1, 2], "s": "x y"])
            let json = try #require(post as? JSONValue)
            // The exact bytes are unit-tested (HTTPRequestSerializerTests); here, what the server parsed.
            #expect(json["form"]?["a[b]"] == "1")
            #expect(json["form"]?["c[]"] == ["1", "2"])
            #expect(json["form"]?["s"] == "x y")
            #expect(json["headers"]?["Content-Length"] == "38")
            #expect(json["headers"]?["Content-Type"] == "application/x-www-form-urlencoded")
            let (get, _) = try await manager.get("get", parameters: ["a": ["b": 1], "e": .null])
            let url = (get as? JSONValue)?["url"]
            #expect(url == .string(server.baseURL.absoluteString + "/get?a%5Bb%5D=1&e"))
        }
    }

    @Test func jsonSerializerBody() async throws {
        try await TestServer.withRunning { server in
            let manager = HTTPSessionManager(baseURL: server.baseURL)
            manager.requestSerializer = JSONRequestSerializer()
            let (object, _) = try await manager.post("post", parameters: ["name": "ada", "n": 3, "ok": true])
            let json = try #require(object as? JSONValue)
            #expect(json["headers"]?["Content-Type"] == "application/json")
            #expect(json["json"]?["name"] == "ada")
            #expect(json["json"]?["n"] == .int(3))
        }
    }

    @Test func propertyListSerializerBody() async throws {
        try await TestServer.withRunning { server in
            let manager = HTTPSessionManager(baseURL: server.baseURL)
            manager.requestSerializer = PropertyListRequestSerializer()
            let (object, _) = try await manager.post("post", parameters: ["k": "v"])
            let json = try #require(object as? JSONValue)
            #expect(json["headers"]?["Content-Type"] == "application/x-plist")
            #expect(try propertyList(echoedIn: json) == ["k": "v"])
        }
    }

    @Test func responseSerializersOnRealResponses() async throws {
        try await TestServer.withRunning { server in
            let manager = HTTPSessionManager(baseURL: server.baseURL)
            let xml = try await manager.data(
                for: URLRequest(url: server.sessionURL("/xml")), serializer: XMLDocumentResponseSerializer())
            #expect(xml.response.statusCode == 200)
            #expect(xml.value?.rootElementName == "slideshow")
            let png = try await manager.data(for: URLRequest(url: server.sessionURL("/image/png")), serializer: ImageResponseSerializer())
            let image = try #require(png.value)
            #expect(image.format == .png)
            #expect(image.pixelWidth == 16 && image.pixelHeight == 12)
            let text = try await manager.data(for: URLRequest(url: server.sessionURL("/encoding/utf8")), serializer: StringResponseSerializer())
            // Multi-byte scripts prove the body was decoded as UTF-8, not Latin-1.
            #expect(text.value.hasPrefix("<h1>Unicode Demo</h1>"))
            #expect(text.value.contains("Chinese:    我能吞下玻璃而不伤身体。"))
        }
    }

    @Test func htmlIsRejectedByJSONWithTheContentTypeError() async throws {
        try await TestServer.withRunning { server in
            let manager = HTTPSessionManager(baseURL: server.baseURL)
            do {
                _ = try await manager.get("html")
                Issue.record("HTML passed JSON validation")
            } catch let error as CourierError {
                guard case .unacceptableContentType(let type, _, _) = error else {
                    Issue.record("expected unacceptableContentType, got \(error)")
                    return
                }
                #expect(type?.hasPrefix("text/html") == true)
                #expect("\(error)".contains("unacceptable content-type"))
            }
        }
    }
}
