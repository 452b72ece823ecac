public import Foundation
#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

/// AFNetworking's `AFJSONResponseSerializer`: validates, then parses JSON into a ``JSONValue``.
///
/// - Acceptable content types: `application/json`, `text/json`, `text/javascript`.
/// - A content-type failure (or a response invalid with no error) is not parsed: nil.
/// - A status-only failure is still parsed: ``serializeResponse(_:data:)`` returns the object
///   **and** the status error; ``responseObject(for:data:)`` throws the status error.
/// - An empty body or a single space gives nil and no extra error (Rails' `head :ok`).
/// - A parse error becomes ``CourierError/responseSerializationFailed(reason:response:data:underlying:)``
///   with the validation error, if any, as `underlying`.
/// - ``removesKeysWithNullValues`` drops `null` members and elements recursively.
///
/// Thread-safe: settings live behind mutexes.
public final class JSONResponseSerializer: HTTPResponseSerializerWrapper {
    /// Holds the validation settings.
    public let base: HTTPResponseSerializer
    /// AFN's JSON content types, shared with ``DecodableResponseSerializer``.
    static let jsonContentTypes: Set<String> = ["application/json", "text/json", "text/javascript"]

    private struct Settings {
        var readingOptions: JSONSerialization.ReadingOptions
        var removesKeysWithNullValues: Bool
    }

    private let settings: LockedValue<Settings>

    /// Creates a serializer. `readingOptions`: `.fragmentsAllowed` accepts a top-level
    /// scalar (default: only objects and arrays, as `JSONSerialization`).
    public init(readingOptions: JSONSerialization.ReadingOptions = [], removesKeysWithNullValues: Bool = false) {
        base = HTTPResponseSerializer(acceptableContentTypes: Self.jsonContentTypes)
        settings = LockedValue(
            Settings(readingOptions: readingOptions, removesKeysWithNullValues: removesKeysWithNullValues))
    }

    /// Reading options; only `.fragmentsAllowed` changes the result. Default none.
    public var readingOptions: JSONSerialization.ReadingOptions {
        get { settings.value.readingOptions }
        set { settings.update { $0.readingOptions = newValue } }
    }

    /// Whether `null` object members and array elements are removed, recursively. Default false.
    public var removesKeysWithNullValues: Bool {
        get { settings.value.removesKeysWithNullValues }
        set { settings.update { $0.removesKeysWithNullValues = newValue } }
    }

    /// The parsed JSON, nil for an empty or single-space body.
    /// - Throws: the validation error (also when the body parsed) or the parse error.
    public func responseObject(for response: HTTPURLResponse?, data: Data?) throws -> JSONValue? {
        try serializeResponse(response, data: data).get(fallback: nil)
    }

    /// The parsed JSON and the error together, as described on the type.
    public func serializeResponse(_ response: HTTPURLResponse?, data: Data?) -> SerializedResponse<JSONValue?> {
        serialize(response.map(SerializerInput.init), data: data)
    }
}

extension JSONResponseSerializer: InputSerializing {
    func responseObject(for input: SerializerInput?, data: Data?) throws(CourierError) -> JSONValue? {
        try serialize(input, data: data).get(fallback: nil)
    }

    /// As the default, without its dynamic cast: the value boxed as `JSONValue?`, or nil.
    func serializeForTask(_ input: SerializerInput?, data: Data?) -> (object: (any Sendable)?, error: CourierError?) {
        let result = serialize(input, data: data)
        return (result.object.flatMap { $0 }.map { Optional.some($0) as any Sendable }, result.error)
    }

    func serialize(_ input: SerializerInput?, data: Data?) -> SerializedResponse<JSONValue?> {
        let validation = base.validation(input, data: data)
        if validation.skipsParsing { return SerializedResponse(object: .some(nil), error: validation.error) }
        guard let data, !data.isBlankBody else {
            return SerializedResponse(object: .some(nil), error: validation.error)
        }
        let settings = settings.value
        do {
            let value = try JSONValue(parsing: data, allowFragments: settings.readingOptions.contains(.fragmentsAllowed))
            return SerializedResponse(
                object: .some(settings.removesKeysWithNullValues ? value.removingNullValues() : value),
                error: validation.error)
        } catch {
            return SerializedResponse(
                object: .some(nil),
                error: .responseSerializationFailed(
                    reason: "invalid JSON: \(error)", response: input?.response, data: data, underlying: validation.error))
        }
    }
}
