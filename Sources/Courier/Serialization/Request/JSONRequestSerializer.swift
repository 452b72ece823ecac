public import Foundation
#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

/// AFNetworking's `AFJSONRequestSerializer`: parameters as a JSON body.
///
/// Methods in ``HTTPRequestSerializerWrapper/httpMethodsEncodingParametersInURI`` (GET, HEAD,
/// DELETE) defer to the query-string encoding of ``base``. For the others, the default
/// headers are added where missing and, **only when parameters are non-nil**, the body is
/// the JSON text and `Content-Type` is `application/json` unless already set; nil
/// parameters leave body and Content-Type alone. A top-level array (or any JSON value) can be
/// sent with ``request(method:urlString:jsonObject:)`` / ``serialize(_:jsonObject:)``.
///
/// JSON text: object keys sorted (deterministic), `/` written as `\/` as `JSONSerialization`
/// does unless ``writingOptions`` has `.withoutEscapingSlashes`; `.prettyPrinted` is honoured.
/// Thread-safe: configuration lives behind ``base``'s mutex.
public final class JSONRequestSerializer: HTTPRequestSerializerWrapper {
    /// Holds headers, URI methods and request properties.
    public let base: HTTPRequestSerializer
    private let options: LockedValue<JSONSerialization.WritingOptions>

    /// Creates a serializer with ``HTTPRequestSerializer``'s defaults and no writing options.
    public init(writingOptions: JSONSerialization.WritingOptions = []) {
        base = HTTPRequestSerializer()
        options = LockedValue(writingOptions)
    }

    /// Options for the JSON text (`.prettyPrinted`, `.withoutEscapingSlashes`). Default none.
    public var writingOptions: JSONSerialization.WritingOptions {
        get { options.value }
        set { options.value = newValue }
    }

    /// Builds a request with a JSON body (or a query for URI methods).
    /// - Throws: ``CourierError/RequestSerializationReason/invalidURL(_:)``,
    ///   ``CourierError/RequestSerializationReason/invalidJSONValue(_:)``.
    public func request(method: String, urlString: String, parameters: Parameters?) throws -> URLRequest {
        try request(method: method, urlString: urlString, jsonObject: parameters.map { .dictionary($0) })
    }

    /// Like ``request(method:urlString:parameters:)`` for any JSON value, e.g. a top-level
    /// array. URI methods accept only a dictionary (or nil).
    public func request(method: String, urlString: String, jsonObject: ParameterValue?) throws -> URLRequest {
        try serialize(base.makeRequest(method: method, urlString: urlString), jsonObject: jsonObject)
    }

    /// Serializes `parameters` into `request` as described on the type.
    public func serialize(_ request: URLRequest, parameters: Parameters?) throws -> URLRequest {
        try serialize(request, jsonObject: parameters.map { .dictionary($0) })
    }

    /// Serializes any JSON value (a top-level array included) into `request`.
    /// - Throws: ``CourierError/RequestSerializationReason/invalidJSONValue(_:)`` for a set or
    ///   a non-finite number; for URI methods, a value that is not a dictionary.
    public func serialize(_ request: URLRequest, jsonObject: ParameterValue?) throws -> URLRequest {
        try base.serialize(
            request,
            queryParameters: {
                switch jsonObject {
                case nil: return nil
                case .dictionary(let parameters)?: return parameters
                case let value?:
                    throw CourierError.requestSerializationFailed(
                        .invalidJSONValue("only a dictionary can be encoded in the URL, not \(value)"))
                }
            },
            contentType: "application/json",
            body: { try jsonObject.map { try Self.jsonData(for: $0, options: writingOptions) } })
    }

    /// JSON text for a parameter value; sets and non-finite numbers are not JSON.
    static func jsonData(for value: ParameterValue, options: JSONSerialization.WritingOptions) throws -> Data {
        JSONWriter.data(for: try JSONValue(validating: value), options: JSONWriter.Options(options))
    }
}

extension JSONValue {
    /// The JSON form of a parameter value (AFN's `isValidJSONObject` check).
    /// - Throws: ``CourierError/RequestSerializationReason/invalidJSONValue(_:)``.
    init(validating value: ParameterValue) throws {
        switch value {
        case .string(let string): self = .string(string)
        case .int(let int): self = .int(Int64(int))
        case .double(let double):
            guard double.isFinite else {
                throw CourierError.requestSerializationFailed(.invalidJSONValue("\(double) is not a JSON number"))
            }
            self = .double(double)
        case .bool(let bool): self = .bool(bool)
        case .null: self = .null
        case .array(let values): self = .array(try values.map { try JSONValue(validating: $0) })
        case .dictionary(let dictionary): self = .object(try dictionary.mapValues { try JSONValue(validating: $0) })
        case .set:
            throw CourierError.requestSerializationFailed(.invalidJSONValue("a set is not a JSON value"))
        }
    }
}
