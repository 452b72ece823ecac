public import Foundation

/// A parsed property list, as a `Sendable` value: what ``PropertyListResponseSerializer``
/// returns (`PropertyListSerialization` gives `Any`, which can't cross threads safely).
public enum PropertyListValue: Sendable, Equatable, Hashable {
    /// `<string>`.
    case string(String)
    /// `<integer>`, kept exact.
    case integer(Int64)
    /// `<real>`.
    case real(Double)
    /// `<true/>` or `<false/>`.
    case bool(Bool)
    /// `<date>`.
    case date(Date)
    /// `<data>`.
    case data(Data)
    /// `<array>`.
    case array([PropertyListValue])
    /// `<dict>`.
    case dictionary([String: PropertyListValue])

    /// The member named `key` of a dictionary; nil otherwise.
    public subscript(key: String) -> PropertyListValue? {
        if case .dictionary(let dictionary) = self { return dictionary[key] }
        return nil
    }

    /// The element at `index` of an array; nil when out of range or not an array.
    public subscript(index: Int) -> PropertyListValue? {
        if case .array(let array) = self, array.indices.contains(index) { return array[index] }
        return nil
    }

    /// Converts what `PropertyListSerialization` returned; nil for an unknown object type.
    init?(foundationObject object: Any) {
        switch object {
        case let value as String: self = .string(value)
        case let value as Date: self = .date(value)
        case let value as Data: self = .data(value)
        case let value as [Any]:
            var elements = [PropertyListValue]()
            for element in value {
                guard let converted = PropertyListValue(foundationObject: element) else { return nil }
                elements.append(converted)
            }
            self = .array(elements)
        case let value as [String: Any]:
            var members = [String: PropertyListValue]()
            for (key, member) in value {
                guard let converted = PropertyListValue(foundationObject: member) else { return nil }
                members[key] = converted
            }
            self = .dictionary(members)
        default:
            // Booleans arrive as Swift `Bool` on Linux, numbers as `NSNumber`; an NSNumber is
            // also castable to Bool, so test the dynamic type first.
            if type(of: object) == Bool.self, let bool = object as? Bool {
                self = .bool(bool)
            } else if let number = object as? NSNumber {
                let kind = String(cString: number.objCType)
                if kind == "c" || kind == "B" {
                    self = .bool(number.boolValue)
                } else if kind == "d" || kind == "f" {
                    self = .real(number.doubleValue)
                } else {
                    self = .integer(number.int64Value)
                }
            } else {
                return nil
            }
        }
    }
}
