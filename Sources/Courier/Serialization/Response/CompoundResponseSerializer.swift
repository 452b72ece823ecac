public import Foundation
#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

/// AFNetworking's `AFCompoundResponseSerializer`: tries its serializers in order and returns
/// the first object any of them yields; that serializer's error, if any, comes with it.
///
/// When none yields an object, falls back to ``HTTPResponseSerializer``'s behaviour with its
/// own settings (``base``, default 200..<300 and any content type): validation, then the raw
/// `Data`. The output is type-erased: cast it (`as? JSONValue`, `as? Image`, `as? Data`).
/// Thread-safe: the list is fixed at creation.
public final class CompoundResponseSerializer: HTTPResponseSerializerWrapper {
    /// The fallback's validation settings.
    public let base: HTTPResponseSerializer
    /// The serializers, in the order they are tried.
    public let responseSerializers: [any ResponseSerializer]

    /// Creates a compound of `serializers`.
    public init(_ serializers: [any ResponseSerializer]) {
        base = HTTPResponseSerializer()
        responseSerializers = serializers
    }

    /// The first object a component yields, else the data.
    /// - Throws: the winning component's error, or the fallback's validation error.
    public func responseObject(for response: HTTPURLResponse?, data: Data?) throws -> (any Sendable)? {
        let result = serializeResponse(response, data: data)
        if let error = result.error { throw error }
        return result.object ?? nil
    }

    /// The first object a component yields with that component's error; else the data with
    /// the fallback's validation error.
    public func serializeResponse(_ response: HTTPURLResponse?, data: Data?) -> SerializedResponse<(any Sendable)?> {
        for serializer in responseSerializers {
            let result = serializer.serializeResponseErased(response, data: data)
            if let unwrapped = SerializedObject.unwrapped(result.object) {
                return SerializedResponse(object: .some(unwrapped), error: result.error)
            }
        }
        let fallback = base.serializeResponse(response, data: data)
        return SerializedResponse(object: .some(fallback.object.flatMap { $0 }), error: fallback.error)
    }
}
