import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@Suite struct JSONResponseSerializerTests {
    let json = makeResponse(contentType: "application/json")

    @Test func parsesWithExactIntegersAndBooleans() throws {
        let data = Data(#"{"big": 9007199254740993, "neg": -1, "f": 1.5, "e": 1e2, "t": true, "n": null, "s": "\u00e9\ud83d\ude00/"}"#.utf8)
        let value = try #require(try JSONResponseSerializer().responseObject(for: json, data: data))
        #expect(value["big"] == .int(9_007_199_254_740_993))
        #expect(value["neg"]?.intValue == -1)
        #expect(value["f"] == .double(1.5))
        #expect(value["e"] == .double(100))
        #expect(value["t"] == .bool(true))
        #expect(value["t"]?.intValue == nil)
        #expect(value["n"] == .null)
        #expect(value["s"]?.stringValue == "é😀/")
    }

    @Test func acceptableContentTypes() {
        #expect(JSONResponseSerializer().acceptableContentTypes == ["application/json", "text/json", "text/javascript"])
        for type in ["text/json", "text/javascript", "application/json; charset=utf-8"] {
            #expect((try? JSONResponseSerializer().responseObject(for: makeResponse(contentType: type), data: Data("[1]".utf8))) == .some([1]))
        }
    }

    @Test func emptyOrSingleSpaceIsNilWithoutError() throws {
        let serializer = JSONResponseSerializer()
        #expect(try serializer.responseObject(for: json, data: Data()) == nil)
        #expect(try serializer.responseObject(for: json, data: Data(" ".utf8)) == nil)
        #expect(try serializer.responseObject(for: json, data: nil) == nil)
        #expect(try serializer.responseObject(for: makeResponse(status: 204), data: Data()) == nil)
    }

    @Test func contentTypeFailureIsNotParsed() {
        let result = JSONResponseSerializer().serializeResponse(makeResponse(contentType: "text/html"), data: Data("{}".utf8))
        #expect(result.object == .some(nil))
        #expect(result.error?.description == "Request failed: unacceptable content-type: text/html")
    }

    @Test func statusOnlyFailureParsesAndReturnsBoth() throws {
        let serializer = JSONResponseSerializer()
        let response = makeResponse(status: 404, contentType: "application/json")
        let result = serializer.serializeResponse(response, data: Data(#"{"error":"gone"}"#.utf8))
        #expect(result.object == .some(["error": "gone"]))
        #expect(result.error?.description == "Request failed: not found (404)")
        #expect(throws: CourierError.self) { try serializer.responseObject(for: response, data: Data("{}".utf8)) }
    }

    @Test func parseErrorChainsValidationError() {
        let serializer = JSONResponseSerializer()
        let ok = serializer.serializeResponse(json, data: Data("{nope".utf8))
        guard case .responseSerializationFailed(_, _, _, nil)? = ok.error else {
            Issue.record("expected a serialization error, got \(String(describing: ok.error))")
            return
        }
        let failed = serializer.serializeResponse(makeResponse(status: 500, contentType: "application/json"), data: Data("{nope".utf8))
        guard case .responseSerializationFailed(_, _, _, .unacceptableStatusCode?)? = failed.error else {
            Issue.record("expected the status error chained")
            return
        }
    }

    @Test func fragmentsNeedTheOption() throws {
        let serializer = JSONResponseSerializer()
        #expect(throws: CourierError.self) { try serializer.responseObject(for: json, data: Data("42".utf8)) }
        serializer.readingOptions = .fragmentsAllowed
        #expect(try serializer.responseObject(for: json, data: Data("42".utf8)) == 42)
    }

    @Test func removesKeysWithNullValuesRecursively() throws {
        let serializer = JSONResponseSerializer(removesKeysWithNullValues: true)
        let data = Data(#"{"a": null, "b": {"c": null, "d": [1, null, {"e": null, "f": 2}]}}"#.utf8)
        #expect(try serializer.responseObject(for: json, data: data) == ["b": ["d": [1, ["f": 2]]]])
    }
}
