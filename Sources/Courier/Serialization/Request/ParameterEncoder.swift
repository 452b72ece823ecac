public import Foundation

/// Encodes any `Encodable` value into ``Parameters``.
///
/// The value goes through `JSONEncoder` with the strategies below, so keys and nesting follow
/// its `Encodable` implementation. Mapping: strings stay strings, integers stay exact, other
/// numbers are doubles, Booleans become ``ParameterValue/bool(_:)`` (written `1`/`0` like
/// AFNetworking's `NSNumber` BOOL), `nil` optionals are left out (encode `.null` explicitly
/// through ``ParameterValue`` to send a bare key), arrays become ``ParameterValue/array(_:)``.
///
/// - Dates: ``dateEncodingStrategy``, default `.iso8601` (`2001-01-01T00:00:00Z`); any
///   `JSONEncoder` strategy works (`.secondsSince1970` gives a number).
/// - Data: ``dataEncodingStrategy``, default `.base64`.
///
/// A value type; safe to use from any thread.
public struct ParameterEncoder: Sendable {
    /// How dates are written. Default `.iso8601`.
    public var dateEncodingStrategy: JSONEncoder.DateEncodingStrategy = .iso8601
    /// How `Data` is written. Default `.base64`.
    public var dataEncodingStrategy: JSONEncoder.DataEncodingStrategy = .base64
    /// How keys are written. Default `.useDefaultKeys`.
    public var keyEncodingStrategy: JSONEncoder.KeyEncodingStrategy = .useDefaultKeys

    /// Creates an encoder with the default strategies.
    public init() {}

    /// Encodes `value`, which must encode as a keyed container (a struct, class or dictionary).
    /// - Throws: ``CourierError/RequestSerializationReason/parameterEncodingFailed(_:)`` when
    ///   the value fails to encode or is not keyed at the top level.
    public func encode<T: Encodable>(_ value: T) throws -> Parameters {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = dateEncodingStrategy
        encoder.dataEncodingStrategy = dataEncodingStrategy
        encoder.keyEncodingStrategy = keyEncodingStrategy
        let json: JSONValue
        do {
            json = try JSONValue(parsing: try encoder.encode(value))
        } catch {
            throw CourierError.requestSerializationFailed(.parameterEncodingFailed(String(describing: error)))
        }
        guard case .dictionary(let parameters) = ParameterValue(json) else {
            throw CourierError.requestSerializationFailed(
                .parameterEncodingFailed("\(T.self) does not encode as a keyed container"))
        }
        return parameters
    }
}

extension ParameterValue {
    /// The parameter form of a JSON value (objects become dictionaries).
    public init(_ json: JSONValue) {
        switch json {
        case .null: self = .null
        case .bool(let bool): self = .bool(bool)
        case .int(let int): self = Int(exactly: int).map(ParameterValue.int) ?? .double(Double(int))
        case .double(let double): self = .double(double)
        case .string(let string): self = .string(string)
        case .array(let array): self = .array(array.map(ParameterValue.init))
        case .object(let object): self = .dictionary(object.mapValues(ParameterValue.init))
        }
    }
}
