public import Foundation

/// A parsed JSON document: what ``JSONResponseSerializer`` returns.
///
/// Integers stay exact (`Int64`; a number with a fraction or an exponent, or one outside
/// `Int64`, is a `Double`), and Booleans are distinct from numbers. Build values with literals,
/// read them with subscripts and the typed accessors, or ``decode(_:using:)`` them into a
/// `Decodable` type. A value type: `Sendable` and thread-safe.
///
/// ```swift
/// let json: JSONValue = ["user": ["id": 42, "tags": ["a", "b"]]]
/// json["user"]?["id"]?.intValue        // 42
/// json["user"]?["tags"]?[1]?.stringValue // "b"
/// ```
public enum JSONValue: Sendable, Equatable, Hashable {
    /// `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// An integer that fits in `Int64`, kept exact.
    case int(Int64)
    /// Any other number.
    case double(Double)
    /// A string.
    case string(String)
    /// An array.
    case array([JSONValue])
    /// An object; key order is not kept (as with `JSONSerialization`).
    case object([String: JSONValue])

    /// The member named `key` of an object; nil for a missing key or a non-object.
    public subscript(key: String) -> JSONValue? {
        if case .object(let object) = self { return object[key] }
        return nil
    }

    /// The element at `index` of an array; nil when out of range or not an array.
    public subscript(index: Int) -> JSONValue? {
        if case .array(let array) = self, array.indices.contains(index) { return array[index] }
        return nil
    }

    /// The string, or nil for any other kind.
    public var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    /// The integer; a `double` with an exact integer value converts; nil otherwise.
    public var intValue: Int64? {
        switch self {
        case .int(let value): return value
        case .double(let value): return Int64(exactly: value)
        default: return nil
        }
    }

    /// The number as a `Double` (integers convert); nil for other kinds.
    public var doubleValue: Double? {
        switch self {
        case .int(let value): return Double(value)
        case .double(let value): return value
        default: return nil
        }
    }

    /// The Boolean, or nil for any other kind (numbers are not Booleans).
    public var boolValue: Bool? {
        if case .bool(let value) = self { return value }
        return nil
    }

    /// The elements, or nil when not an array.
    public var arrayValue: [JSONValue]? {
        if case .array(let value) = self { return value }
        return nil
    }

    /// The members, or nil when not an object.
    public var objectValue: [String: JSONValue]? {
        if case .object(let value) = self { return value }
        return nil
    }

    /// Whether this is `null`.
    public var isNull: Bool { self == .null }

    /// This value with every `null` object member and array element removed, recursively:
    /// AFNetworking's `AFJSONObjectByRemovingKeysWithNullValues`.
    public func removingNullValues() -> JSONValue {
        switch self {
        case .array(let array): return .array(array.filter { !$0.isNull }.map { $0.removingNullValues() })
        case .object(let object):
            return .object(object.filter { !$0.value.isNull }.mapValues { $0.removingNullValues() })
        default: return self
        }
    }

    /// Decodes this value into `type` by writing it as JSON and reading it with `decoder`.
    /// - Throws: the decoder's `DecodingError` when the shapes don't match.
    public func decode<T: Decodable>(_ type: T.Type, using decoder: JSONDecoder = JSONDecoder()) throws -> T {
        try decoder.decode(type, from: JSONWriter.data(for: self, options: [.fragmentsAllowed]))
    }

    /// Parses JSON text (UTF-8, a leading byte-order mark is skipped).
    /// - Parameter data: the JSON text.
    /// - Parameter allowFragments: whether a top-level scalar is accepted (default `true`).
    /// - Throws: ``JSONParsingError`` with the byte offset of the problem.
    public init(parsing data: Data, allowFragments: Bool = true) throws(JSONParsingError) {
        self = try JSONParser.parse(data, allowFragments: allowFragments)
    }

    /// This value as JSON text, keys sorted, `/` escaped as `\/` like `JSONSerialization`.
    public var jsonData: Data { JSONWriter.data(for: self, options: [.fragmentsAllowed]) }
}

/// Why JSON text could not be parsed.
public struct JSONParsingError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The byte offset where parsing stopped.
    public var offset: Int
    /// What was wrong.
    public var reason: String

    /// Creates an error.
    public init(offset: Int, reason: String) {
        self.offset = offset
        self.reason = reason
    }

    /// `reason` with the offset.
    public var description: String { "\(reason) around byte \(offset)" }
}

extension JSONValue: ExpressibleByNilLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByStringLiteral, ExpressibleByArrayLiteral,
    ExpressibleByDictionaryLiteral
{
    /// `null`.
    public init(nilLiteral: ()) { self = .null }
    /// A Boolean.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    /// An exact integer.
    public init(integerLiteral value: Int64) { self = .int(value) }
    /// A double.
    public init(floatLiteral value: Double) { self = .double(value) }
    /// A string.
    public init(stringLiteral value: String) { self = .string(value) }
    /// An array.
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    /// An object; a repeated key keeps its last value.
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
}

extension JSONValue: Codable {
    /// Decodes any JSON value from a single-value container.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int64.self) {
            self = .int(value)
        } else if let value = try? container.decode(Double.self) {
            self = .double(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    /// Encodes the value into a single-value container.
    public func encode(to encoder: any Encoder) throws {
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
}
