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

@Suite struct JSONValueTests {
    struct User: Codable, Equatable {
        var id: Int64
        var name: String
        var admin: Bool
        var score: Double?
    }

    @Test func literalsSubscriptsAndAccessors() {
        let value: JSONValue = ["user": ["id": 42, "tags": ["a", "b"], "ok": true, "x": nil, "pi": 3.25]]
        #expect(value["user"]?["id"]?.intValue == 42)
        #expect(value["user"]?["tags"]?[1]?.stringValue == "b")
        #expect(value["user"]?["tags"]?[2] == nil)
        #expect(value["user"]?["ok"]?.boolValue == true)
        #expect(value["user"]?["x"]?.isNull == true)
        #expect(value["user"]?["pi"]?.doubleValue == 3.25)
        #expect(value["nope"] == nil)
    }

    @Test func decodesIntoCodableTypes() throws {
        let value = try JSONValue(parsing: Data(#"{"id": 9223372036854775807, "name": "ä/b", "admin": false}"#.utf8))
        let user = try value.decode(User.self)
        #expect(user == User(id: .max, name: "ä/b", admin: false, score: nil))
    }

    @Test func roundTripsThroughCodable() throws {
        let value: JSONValue = ["a": [1, 2.5, "x", true, nil], "b": [:]]
        let data = try JSONEncoder().encode(value)
        #expect(try JSONDecoder().decode(JSONValue.self, from: data) == value)
        #expect(try JSONValue(parsing: value.jsonData) == value)
    }

    @Test func rejectsMalformedText() {
        for text in ["", "{", "[1,]", "{\"a\" 1}", "01", "1.", "\"\\ud800\"", "tru", "[1] x", "\"a\u{1}\"", "-"] {
            #expect(throws: JSONParsingError.self, "\(text)") { try JSONValue(parsing: Data(text.utf8)) }
        }
    }

    @Test func hugeIntegersBecomeDoubles() throws {
        #expect(try JSONValue(parsing: Data("18446744073709551616".utf8)) == .double(18_446_744_073_709_551_616))
        #expect(try JSONValue(parsing: Data("-9223372036854775808".utf8)) == .int(.min))
    }

    @Test func byteOrderMarkIsSkipped() throws {
        #expect(try JSONValue(parsing: Data([0xEF, 0xBB, 0xBF] + Array("[true]".utf8))) == [true])
    }
}

@Suite struct ParameterEncoderTests {
    struct Query: Encodable {
        var page: Int
        var flag: Bool
        var name: String?
        var tags: [String]
        var nested: Nested
        var when: Date
        var blob: Data
        struct Nested: Encodable { var z: Double }
    }

    @Test func encodesWithAFNScalarRules() throws {
        let query = Query(
            page: 2, flag: true, name: nil, tags: ["a", "b"], nested: .init(z: 0.5),
            when: Date(timeIntervalSinceReferenceDate: 0), blob: Data([1, 2, 3]))
        let parameters = try ParameterEncoder().encode(query)
        #expect(parameters["flag"] == .bool(true))
        #expect(parameters["name"] == nil)
        #expect(queryString(from: parameters)
            == "blob=AQID&flag=1&nested%5Bz%5D=0.5&page=2&tags%5B%5D=a&tags%5B%5D=b&when=2001-01-01T00%3A00%3A00Z")
    }

    @Test func dateStrategyIsConfigurable() throws {
        var encoder = ParameterEncoder()
        encoder.dateEncodingStrategy = .secondsSince1970
        let parameters = try encoder.encode(["when": Date(timeIntervalSince1970: 12)])
        #expect(parameters["when"] == .int(12))
    }

    @Test func topLevelMustBeKeyed() {
        #expect(throws: CourierError.self) { try ParameterEncoder().encode([1, 2]) }
    }
}
