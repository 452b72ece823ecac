public import Foundation
#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

/// Validates a response and turns its data into an object: AFNetworking's
/// `AFURLResponseSerialization`.
///
/// AFNetworking returns an object *and* an error from one call (a JSON body that parsed but
/// came with a 404, say). ``responseObject(for:data:)`` is the Swift shape: it returns the
/// object or throws the error. ``serializeResponse(_:data:)`` is AFNetworking's shape: it
/// returns both in a ``SerializedResponse``; the session layer calls it so that a failure
/// block can still see the parsed body. Both run off the engine's event loop, on any thread.
public protocol ResponseSerializer: Sendable {
    /// What a successful serialization produces.
    associatedtype Output: Sendable

    /// Validates `response` and returns the object made from `data`.
    /// - Throws: a ``CourierError`` (validation or parsing); the object that may come with
    ///   it is available from ``serializeResponse(_:data:)``.
    func responseObject(for response: HTTPURLResponse?, data: Data?) throws -> Output

    /// Validates and parses, returning both the object (when one could be made) and the
    /// error (when validation or parsing failed). The default calls
    /// ``responseObject(for:data:)`` and returns either its value or its error.
    func serializeResponse(_ response: HTTPURLResponse?, data: Data?) -> SerializedResponse<Output>
}

extension ResponseSerializer {
    /// Calls ``responseObject(for:data:)``; a non-Courier error is wrapped in
    /// ``CourierError/responseSerializationFailed(reason:response:data:underlying:)``.
    public func serializeResponse(_ response: HTTPURLResponse?, data: Data?) -> SerializedResponse<Output> {
        do {
            return SerializedResponse(object: try responseObject(for: response, data: data), error: nil)
        } catch let error as CourierError {
            return SerializedResponse(object: nil, error: error)
        } catch {
            return SerializedResponse(
                object: nil,
                error: .responseSerializationFailed(
                    reason: String(describing: error), response: response, data: data, underlying: nil))
        }
    }

    /// ``serializeResponse(_:data:)`` with the object type erased, for code that holds an
    /// `any ResponseSerializer`.
    public func serializeResponseErased(_ response: HTTPURLResponse?, data: Data?) -> SerializedResponse<any Sendable> {
        let result = serializeResponse(response, data: data)
        return SerializedResponse(object: result.object.map { $0 as any Sendable }, error: result.error)
    }

    /// What a completed task hands out for `response` and `data`: a built-in serializer reads
    /// the response through ``SerializerInput``; any other gets the response itself. A nil
    /// wrapped in `Optional` becomes nil (``SerializedObject/unwrapped(_:)``).
    func serializeForCompletion(_ response: HTTPURLResponse?, data: Data?) -> (object: (any Sendable)?, error: CourierError?) {
        if let builtIn = self as? any InputSerializing {
            return builtIn.serializeForTask(response.map(SerializerInput.init), data: data)
        }
        let result = serializeResponseErased(response, data: data)
        return (SerializedObject.unwrapped(result.object), result.error)
    }
}

/// The outcome of ``ResponseSerializer/serializeResponse(_:data:)``: an object, an error, or
/// both (AFNetworking's status-failure case: the body parsed but the status was unacceptable).
public struct SerializedResponse<Output: Sendable>: Sendable {
    /// The object, when one could be made.
    public var object: Output?
    /// The validation or parsing error, if any.
    public var error: CourierError?

    /// Creates an outcome.
    public init(object: Output?, error: CourierError?) {
        self.object = object
        self.error = error
    }

    /// The object, or the error thrown; with neither, `fallback` is returned.
    func get(fallback: Output) throws(CourierError) -> Output {
        if let error { throw error }
        return object ?? fallback
    }
}

/// A response serializer built on an ``HTTPResponseSerializer`` that holds the validation
/// settings. AFNetworking subclasses `AFHTTPResponseSerializer`; a `Sendable` Swift class
/// must be final, so the JSON, XML, property-list, image, string and decodable serializers
/// wrap one, and this protocol forwards its settings.
public protocol HTTPResponseSerializerWrapper: ResponseSerializer, AnyObject {
    /// The serializer holding the validation settings.
    var base: HTTPResponseSerializer { get }
}

extension HTTPResponseSerializerWrapper {
    /// See ``HTTPResponseSerializer/acceptableStatusCodes``.
    public var acceptableStatusCodes: IndexSet? {
        get { base.acceptableStatusCodes }
        set { base.acceptableStatusCodes = newValue }
    }

    /// See ``HTTPResponseSerializer/acceptableContentTypes``.
    public var acceptableContentTypes: Set<String>? {
        get { base.acceptableContentTypes }
        set { base.acceptableContentTypes = newValue }
    }

    /// See ``HTTPResponseSerializer/validate(_:data:)``.
    public func validate(_ response: HTTPURLResponse?, data: Data?) throws {
        try base.validate(response, data: data)
    }
}
