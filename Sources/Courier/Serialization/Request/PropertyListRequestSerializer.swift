public import Foundation
#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

/// AFNetworking's `AFPropertyListRequestSerializer`: parameters as a property-list body.
///
/// Same shape as ``JSONRequestSerializer``: URI methods defer to the query encoding; other
/// methods get the default headers and, only when parameters are non-nil, the property list
/// in ``format`` (XML by default, or binary) with `Content-Type: application/x-plist` unless
/// already set. Thread-safe: configuration lives behind mutexes.
public final class PropertyListRequestSerializer: HTTPRequestSerializerWrapper {
    /// Holds headers, URI methods and request properties.
    public let base: HTTPRequestSerializer
    private let settings: LockedValue<PropertyListSerialization.PropertyListFormat>

    /// Creates a serializer writing `format` (default XML).
    public init(format: PropertyListSerialization.PropertyListFormat = .xml) {
        base = HTTPRequestSerializer()
        settings = LockedValue(format)
    }

    /// The output format: `.xml` (default) or `.binary`.
    public var format: PropertyListSerialization.PropertyListFormat {
        get { settings.value }
        set { settings.value = newValue }
    }

    /// Builds a request with a property-list body (or a query for URI methods).
    /// - Throws: ``CourierError/RequestSerializationReason/invalidURL(_:)``,
    ///   ``CourierError/RequestSerializationReason/invalidPropertyListValue(_:)``.
    public func request(method: String, urlString: String, parameters: Parameters?) throws -> URLRequest {
        try serialize(base.makeRequest(method: method, urlString: urlString), parameters: parameters)
    }

    /// Serializes `parameters` into `request` as described on the type.
    /// - Throws: ``CourierError/RequestSerializationReason/invalidPropertyListValue(_:)`` for
    ///   `null`, a set or a non-finite number (property lists have no such values).
    public func serialize(_ request: URLRequest, parameters: Parameters?) throws -> URLRequest {
        try base.serialize(
            request, queryParameters: { parameters }, contentType: "application/x-plist",
            body: { try parameters.map { try Self.propertyListData(for: .dictionary($0), format: format) } })
    }

    /// The property list for a parameter value in `format`.
    static func propertyListData(
        for value: ParameterValue,
        format: PropertyListSerialization.PropertyListFormat
    ) throws -> Data {
        let object = try propertyListObject(for: value)
        do {
            return try PropertyListSerialization.data(fromPropertyList: object, format: format, options: 0)
        } catch {
            throw CourierError.requestSerializationFailed(.invalidPropertyListValue(String(describing: error)))
        }
    }

    /// Foundation objects for a parameter value.
    static func propertyListObject(for value: ParameterValue) throws -> Any {
        switch value {
        case .string(let string): return string
        case .int(let int): return NSNumber(value: int)
        case .double(let double):
            guard double.isFinite else {
                throw CourierError.requestSerializationFailed(.invalidPropertyListValue("\(double)"))
            }
            return NSNumber(value: double)
        case .bool(let bool): return NSNumber(value: bool)
        case .null:
            throw CourierError.requestSerializationFailed(.invalidPropertyListValue("null has no property-list form"))
        case .set:
            throw CourierError.requestSerializationFailed(.invalidPropertyListValue("a set has no property-list form"))
        case .array(let values): return try values.map { try propertyListObject(for: $0) } as [Any]
        case .dictionary(let dictionary):
            var result = [String: Any]()
            for (key, nested) in dictionary { result[key] = try propertyListObject(for: nested) }
            return result
        }
    }
}
