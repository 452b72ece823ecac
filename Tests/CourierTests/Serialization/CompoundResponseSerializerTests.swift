import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@Suite struct CompoundResponseSerializerTests {
    @Test func firstObjectWins() throws {
        let compound = CompoundResponseSerializer([JSONResponseSerializer(), ImageResponseSerializer(), StringResponseSerializer()])
        let json = try compound.responseObject(for: makeResponse(contentType: "application/json"), data: Data("[1]".utf8))
        #expect(json as? JSONValue == [1])
        let text = try compound.responseObject(for: makeResponse(contentType: "text/plain"), data: Data("hi".utf8))
        #expect(text as? String == "hi")
    }

    @Test func fallsBackToData() throws {
        let compound = CompoundResponseSerializer([JSONResponseSerializer()])
        let object = try compound.responseObject(for: makeResponse(contentType: "text/html"), data: Data("<p>".utf8))
        #expect(object as? Data == Data("<p>".utf8))
    }

    @Test func winnerErrorComesAlong() {
        let compound = CompoundResponseSerializer([JSONResponseSerializer()])
        let result = compound.serializeResponse(makeResponse(status: 404, contentType: "application/json"), data: Data(#"{"a":1}"#.utf8))
        #expect((result.object ?? nil) as? JSONValue == ["a": 1])
        #expect(result.error?.description == "Request failed: not found (404)")
    }
}
