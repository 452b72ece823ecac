public import Foundation
#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

/// AFNetworking's `AFPropertyListResponseSerializer`: validates, then parses a property list
/// (XML or binary, detected from the bytes) into a ``PropertyListValue``.
///
/// Acceptable content type: `application/x-plist`. A content-type failure is not parsed;
/// empty data gives nil. A parse error throws
/// ``CourierError/responseSerializationFailed(reason:response:data:underlying:)`` with the
/// validation error chained; a status-only failure parses and ``serializeResponse(_:data:)``
/// returns both. ``format`` records AFN's property (the format is detected, not required).
/// Thread-safe.
public final class PropertyListResponseSerializer: HTTPResponseSerializerWrapper {
    /// Holds the validation settings.
    public let base: HTTPResponseSerializer
    private let settings: LockedValue<PropertyListSerialization.PropertyListFormat>

    /// Creates a serializer accepting `application/x-plist`.
    public init(format: PropertyListSerialization.PropertyListFormat = .xml) {
        base = HTTPResponseSerializer(acceptableContentTypes: ["application/x-plist"])
        settings = LockedValue(format)
    }

    /// AFN's `format` (default XML); parsing accepts either format.
    public var format: PropertyListSerialization.PropertyListFormat {
        get { settings.value }
        set { settings.value = newValue }
    }

    /// The property list, nil for empty data or a content-type failure.
    /// - Throws: the validation error or the parse error.
    public func responseObject(for response: HTTPURLResponse?, data: Data?) throws -> PropertyListValue? {
        try serializeResponse(response, data: data).get(fallback: nil)
    }

    /// The property list and the error together.
    public func serializeResponse(_ response: HTTPURLResponse?, data: Data?) -> SerializedResponse<PropertyListValue?> {
        serialize(response.map(SerializerInput.init), data: data)
    }

    /// The property list and the error together, reading `input`.
    func serialize(_ input: SerializerInput?, data: Data?) -> SerializedResponse<PropertyListValue?> {
        let validation = base.validation(input, data: data)
        if validation.skipsParsing { return SerializedResponse(object: .some(nil), error: validation.error) }
        guard let data, !data.isEmpty else { return SerializedResponse(object: .some(nil), error: validation.error) }
        do {
            let object = try PropertyListSerialization.propertyList(from: data, options: [], format: nil)
            guard let value = PropertyListValue(foundationObject: object) else {
                throw CourierError.responseSerializationFailed(
                    reason: "unsupported property-list object \(type(of: object))", response: input?.response, data: data,
                    underlying: validation.error)
            }
            return SerializedResponse(object: .some(value), error: validation.error)
        } catch let error as CourierError {
            return SerializedResponse(object: .some(nil), error: error)
        } catch {
            return SerializedResponse(
                object: .some(nil),
                error: .responseSerializationFailed(
                    reason: "invalid property list: \(error)", response: input?.response, data: data,
                    underlying: validation.error))
        }
    }
}

extension PropertyListResponseSerializer: InputSerializing {
    func responseObject(for input: SerializerInput?, data: Data?) throws(CourierError) -> PropertyListValue? {
        try serialize(input, data: data).get(fallback: nil)
    }
}
