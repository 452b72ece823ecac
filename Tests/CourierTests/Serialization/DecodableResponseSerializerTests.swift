import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@Suite struct DecodableResponseSerializerTests {
    struct Item: Decodable, Sendable, Equatable { var id: Int; var name: String }

    @Test func decodes() throws {
        let item = try DecodableResponseSerializer(Item.self).responseObject(
            for: makeResponse(contentType: "application/json"), data: Data(#"{"id":1,"name":"a"}"#.utf8))
        #expect(item == Item(id: 1, name: "a"))
    }

    @Test func emptyResponses() throws {
        let serializer = DecodableResponseSerializer(Item.self)
        #expect(try serializer.responseObject(for: makeResponse(status: 204), data: Data()) == nil)
        #expect(try serializer.responseObject(for: makeResponse(status: 205), data: nil) == nil)
        #expect(throws: CourierError.self) { try serializer.responseObject(for: makeResponse(status: 200), data: Data()) }
        serializer.allowsEmptyResponses = true
        #expect(try serializer.responseObject(for: makeResponse(status: 200), data: Data()) == nil)
    }

    @Test func singleSpaceBodyCountsAsEmpty() throws {
        // Rails' `head :ok` sends one space: empty for a 204, the empty-body error for a 200.
        let serializer = DecodableResponseSerializer(Item.self)
        let space = Data(" ".utf8)
        #expect(try serializer.responseObject(for: makeResponse(status: 204, contentType: "application/json"), data: space) == nil)
        let result = serializer.serializeResponse(makeResponse(status: 200, contentType: "application/json"), data: space)
        guard case .responseSerializationFailed(let reason, _, _, _)? = result.error else {
            Issue.record("expected the empty-body error, got \(String(describing: result.error))")
            return
        }
        #expect(reason == "empty body where Item was expected")
        // Two spaces are a body, and not JSON: a decoding error.
        let twoSpaces = serializer.serializeResponse(makeResponse(status: 200, contentType: "application/json"), data: Data("  ".utf8))
        guard case .responseSerializationFailed(let decodingReason, _, _, _)? = twoSpaces.error else {
            Issue.record("expected a decoding error, got \(String(describing: twoSpaces.error))")
            return
        }
        #expect(decodingReason.hasPrefix("decoding Item failed"))
    }

    @Test func acceptsAFNetworkingsJSONContentTypes() throws {
        let serializer = DecodableResponseSerializer(Item.self)
        #expect(serializer.acceptableContentTypes == ["application/json", "text/json", "text/javascript"])
        let body = Data(#"{"id":3,"name":"c"}"#.utf8)
        #expect(try serializer.responseObject(for: makeResponse(contentType: "text/javascript"), data: body) == Item(id: 3, name: "c"))
        #expect(throws: CourierError.self) { try serializer.responseObject(for: makeResponse(contentType: "text/html"), data: body) }
    }

    @Test func decodingErrorAndCustomDecoder() throws {
        #expect(throws: CourierError.self) {
            try DecodableResponseSerializer(Item.self).responseObject(for: makeResponse(contentType: "application/json"), data: Data("{}".utf8))
        }
        let snake = DecodableResponseSerializer(Item.self) {
            let decoder = JSONDecoder()
            decoder.keyDecodingStrategy = .convertFromSnakeCase
            return decoder
        }
        #expect(try snake.responseObject(for: makeResponse(contentType: "application/json"), data: Data(#"{"id":2,"name":"b"}"#.utf8)) == Item(id: 2, name: "b"))
    }
}
