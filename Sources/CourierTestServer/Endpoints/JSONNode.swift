import Foundation

/// A JSON value as the server writes it: httpbin's response bodies and the parsed `json` field.
///
/// `Codable` so that a request body is parsed with `JSONDecoder` (which keeps booleans and
/// numbers apart, unlike `JSONSerialization` on Linux) and written with `JSONEncoder`.
enum JSONNode: Codable, Equatable, Sendable {
    case null
    case bool(Bool)
    case int(Int)
    case double(Double)
    case string(String)
    case array([JSONNode])
    case object([String: JSONNode])

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int.self) {
            self = .int(value)
        } else if let value = try? container.decode(Double.self) {
            self = .double(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONNode].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONNode].self))
        }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .int(let value): try container.encode(value)
        case .double(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }

    /// Parses `bytes` as JSON; `nil` when they are not JSON (httpbin then reports `"json": null`).
    static func parse(_ bytes: [UInt8]) -> JSONNode? {
        guard !bytes.isEmpty else { return nil }
        return try? JSONDecoder().decode(JSONNode.self, from: Data(bytes))
    }

    /// The pretty-printed, key-sorted encoding followed by a newline, as httpbin writes it.
    var encoded: [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        // Encoding a tree of strings, numbers and containers cannot fail except for
        // non-finite doubles, which the server never produces; fall back to null anyway.
        let data = (try? encoder.encode(self)) ?? Data("null".utf8)
        return Array(data) + [UInt8(ascii: "\n")]
    }

    /// Groups name/value pairs like httpbin: a name seen once maps to a string, a repeated
    /// name to an array of its values in order.
    static func grouped(_ pairs: [(name: String, value: String)]) -> JSONNode {
        var values: [String: [String]] = [:]
        for pair in pairs {
            values[pair.name, default: []].append(pair.value)
        }
        return .object(values.mapValues { $0.count == 1 ? .string($0[0]) : .array($0.map(JSONNode.string)) })
    }
}

extension JSONNode: ExpressibleByStringLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByDictionaryLiteral, ExpressibleByArrayLiteral
{
    init(stringLiteral value: String) { self = .string(value) }
    init(booleanLiteral value: Bool) { self = .bool(value) }
    init(integerLiteral value: Int) { self = .int(value) }
    init(dictionaryLiteral elements: (String, JSONNode)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
    init(arrayLiteral elements: JSONNode...) { self = .array(elements) }
}

extension JSONNode {
    /// The key-sorted encoding on one line, without a trailing newline.
    var compactEncoded: [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return Array((try? encoder.encode(self)) ?? Data("null".utf8))
    }
}
