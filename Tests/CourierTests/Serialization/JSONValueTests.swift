import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

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

    @Test func stringsWithAndWithoutEscapes() throws {
        // No escape: the raw UTF-8 is taken as it is.
        #expect(try JSONValue(parsing: Data(#"["é😀/x", ""]"#.utf8)) == ["é😀/x", ""])
        // Escapes before, between and after raw text, a surrogate pair and a BMP \u escape.
        let escaped = #"["\"a\\b\/c\n\t\u00e9é\ud83d\ude00end", "\u0041"]"#
        #expect(try JSONValue(parsing: Data(escaped.utf8)) == ["\"a\\b/c\n\té\u{e9}😀end", "A"])
        // Invalid UTF-8 (a lone continuation byte) is rejected on both paths, reported just past the closing quote.
        let quote = UInt8(ascii: "\"")
        let raw = Data([quote, 0x61, 0x80, quote])
        #expect(throws: JSONParsingError(offset: 4, reason: "string is not valid UTF-8")) { try JSONValue(parsing: raw) }
        let mixed = Data([quote, 0x5C, UInt8(ascii: "n"), 0x80, quote])
        #expect(throws: JSONParsingError(offset: 5, reason: "string is not valid UTF-8")) { try JSONValue(parsing: mixed) }
    }

    @Test func byteOrderMarkIsSkipped() throws {
        #expect(try JSONValue(parsing: Data([0xEF, 0xBB, 0xBF] + Array("[true]".utf8))) == [true])
    }
}
