/// One value of a request's parameters: AFNetworking's `NSDictionary` contents, typed.
///
/// Literals build it directly:
/// ```swift
/// let parameters: Parameters = ["a": ["b": 1], "c": [1, 2], "d": .set(["x", "y"]), "e": .null]
/// ```
/// How each case is written into a query string or a form body follows AFNetworking's
/// `AFQueryStringFromParameters` (see ``queryString(from:)``); ``description`` is the text a
/// scalar contributes (AFN's `-description`, so `true` is `1`).
public indirect enum ParameterValue: Sendable, Hashable {
    /// A string.
    case string(String)
    /// An integer.
    case int(Int)
    /// A floating-point number, written like `NSNumber` writes it (`1.5`, `2` for `2.0`).
    case double(Double)
    /// A Boolean, written `1` or `0` (an `NSNumber` BOOL's description).
    case bool(Bool)
    /// `NSNull`: the key alone in a query string, an empty part in a multipart form.
    case null
    /// An ordered list, written under `key[]` element by element.
    case array([ParameterValue])
    /// An unordered set, written under the same key, sorted by ``description``.
    case set(Set<ParameterValue>)
    /// A nested dictionary, written as `parent[child]`, keys sorted.
    case dictionary([String: ParameterValue])

    /// The text this value contributes: AFN's `-description` of the Foundation object.
    ///
    /// Scalars give their value (`true` → `1`, `2.0` → `2`, `null` → empty); containers give a
    /// stable rendering used only to sort sets.
    public var description: String {
        switch self {
        case .string(let string): return string
        case .int(let int): return String(int)
        case .double(let double): return Self.numberDescription(double)
        case .bool(let bool): return bool ? "1" : "0"
        case .null: return ""
        case .array(let values): return "(" + values.map(\.description).joined(separator: ", ") + ")"
        case .set(let values): return "{(" + values.map(\.description).sorted().joined(separator: ", ") + ")}"
        case .dictionary(let dictionary):
            let items = dictionary.keys.sorted().map { "\($0) = \(dictionary[$0]?.description ?? "")" }
            return "{" + items.joined(separator: "; ") + "}"
        }
    }

    /// `NSNumber`'s rendering of a double: integral values without a fraction, others shortest.
    static func numberDescription(_ value: Double) -> String {
        if value.isFinite, value == value.rounded(), abs(value) < 1e15 {
            return String(Int64(value))
        }
        return String(value)
    }
}

/// A request's parameters: AFNetworking's `NSDictionary *parameters`.
public typealias Parameters = [String: ParameterValue]

extension ParameterValue: CustomStringConvertible {}

extension ParameterValue: ExpressibleByStringLiteral {
    /// A ``string(_:)`` from a literal.
    public init(stringLiteral value: String) { self = .string(value) }
}

extension ParameterValue: ExpressibleByIntegerLiteral {
    /// An ``int(_:)`` from a literal.
    public init(integerLiteral value: Int) { self = .int(value) }
}

extension ParameterValue: ExpressibleByFloatLiteral {
    /// A ``double(_:)`` from a literal.
    public init(floatLiteral value: Double) { self = .double(value) }
}

extension ParameterValue: ExpressibleByBooleanLiteral {
    /// A ``bool(_:)`` from a literal.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
}

extension ParameterValue: ExpressibleByNilLiteral {
    /// ``null`` from `nil`.
    public init(nilLiteral: ()) { self = .null }
}

extension ParameterValue: ExpressibleByArrayLiteral {
    /// An ``array(_:)`` from a literal.
    public init(arrayLiteral elements: ParameterValue...) { self = .array(elements) }
}

extension ParameterValue: ExpressibleByDictionaryLiteral {
    /// A ``dictionary(_:)`` from a literal; a repeated key keeps its last value.
    public init(dictionaryLiteral elements: (String, ParameterValue)...) {
        self = .dictionary(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
}
