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
