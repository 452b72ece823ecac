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

/// Each response serializer fed with what the test server really sends (through
/// `HTTPEngine.collect`, standing in for the session layer).
@Suite struct ResponseSerializerEndToEndTests {
    /// Fetches `path` and returns the response as the session layer will build it.
    static func fetch(_ path: String) async throws -> (HTTPURLResponse, Data) {
        let server = try await TestServer.start()
        let engine = try HTTPEngine()
        do {
            let url = try #require(URL(string: server.baseURL.absoluteString + path))
            let collected = try await engine.collect(EngineRequest(url: url))
            var fields: [String: String] = [:]
            for (name, value) in collected.head.headers { fields[name] = value }
            let response = try #require(
                HTTPURLResponse(url: url, statusCode: Int(collected.head.status.code), httpVersion: "HTTP/1.1", headerFields: fields))
            await engine.shutdown()
            try await server.shutdown()
            return (response, Data(collected.body.readableBytesView))
        } catch {
            await engine.shutdown()
            try? await server.shutdown()
            throw error
        }
    }

    @Test func jsonEndpoint() async throws {
        let (response, data) = try await Self.fetch("/json")
        let value = try #require(try JSONResponseSerializer().responseObject(for: response, data: data))
        #expect(value["slideshow"]?["title"] == "Sample Slide Show")
        #expect(value["slideshow"]?["slides"]?[1]?["items"]?[0] == "Why <em>WonderWidgets</em> are great")
        struct Slideshow: Decodable, Sendable { struct Show: Decodable, Sendable { var title: String }; var slideshow: Show }
        let decoded = try DecodableResponseSerializer(Slideshow.self).responseObject(for: response, data: data)
        #expect(decoded?.slideshow.title == value["slideshow"]?["title"]?.stringValue)
    }

    @Test func htmlIsRejectedByJSONWithTheContentTypeError() async throws {
        let (response, data) = try await Self.fetch("/html")
        let result = JSONResponseSerializer().serializeResponse(response, data: data)
        #expect(result.object == .some(nil))
        guard case .unacceptableContentType(let mime, _, let attached)? = result.error else {
            Issue.record("expected the content-type error, got \(String(describing: result.error))")
            return
        }
        #expect(mime == "text/html")
        #expect(attached == data)
        #expect(result.error?.description == "Request failed: unacceptable content-type: text/html")
        #expect(try StringResponseSerializer().responseObject(for: response, data: data).contains("<html"))
    }

    @Test func xmlEndpoint() async throws {
        let (response, data) = try await Self.fetch("/xml")
        let document = try #require(try XMLDocumentResponseSerializer().responseObject(for: response, data: data))
        #expect(document.rootElementName == "slideshow")
        let parser = try #require(try XMLParserResponseSerializer().responseObject(for: response, data: data)).makeParser()
        #expect(parser.parse())
    }

    @Test(arguments: [("png", Image.Format.png), ("jpeg", .jpeg), ("gif", .gif), ("webp", .webp)])
    func imageEndpoints(path: String, format: Image.Format) async throws {
        let (response, data) = try await Self.fetch("/image/\(path)")
        let image = try #require(try ImageResponseSerializer().responseObject(for: response, data: data))
        #expect(image.format == format)
        // Every sample image the server sends is 16 × 12 pixels.
        #expect(image.pixelWidth == 16 && image.pixelHeight == 12)
    }

    @Test func statusNotFound() async throws {
        let (response, data) = try await Self.fetch("/status/404")
        #expect(throws: CourierError.self) { try HTTPResponseSerializer().responseObject(for: response, data: data) }
        let result = JSONResponseSerializer().serializeResponse(response, data: data)
        #expect(result.error?.description == "Request failed: not found (404)")
        #expect(result.error?.response?.statusCode == 404)
    }

    @Test func compoundPicksTheMatchingSerializer() async throws {
        let compound = CompoundResponseSerializer([JSONResponseSerializer(), XMLDocumentResponseSerializer(), ImageResponseSerializer()])
        let (xmlResponse, xmlData) = try await Self.fetch("/xml")
        #expect(try compound.responseObject(for: xmlResponse, data: xmlData) is LockedXMLDocument)
        let (pngResponse, pngData) = try await Self.fetch("/image/png")
        #expect((try compound.responseObject(for: pngResponse, data: pngData) as? Image)?.format == .png)
    }
}
