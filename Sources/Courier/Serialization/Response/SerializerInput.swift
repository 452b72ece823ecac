import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NIOHTTP1

/// What a response serializer reads of a response: the status code, the MIME type and text
/// encoding exactly as `HTTPURLResponse` reports them, whether the response has a URL, and the
/// `HTTPURLResponse` itself, made only when something asks for it (an error carries it).
///
/// Why: `HTTPURLResponse.init` costs ~10 µs per response on Linux (FoundationNetworking
/// canonicalises every header name). The session hands the built-in serializers an input
/// read straight from the engine's response head (``SessionBridge/serializerInput(_:response:)``),
/// so a valid response that nobody else asks an `HTTPURLResponse` of makes none; the public
/// `HTTPURLResponse` entry points wrap the response they are given (``init(_:)``).
struct SerializerInput: Sendable {
    let statusCode: Int
    /// As `HTTPURLResponse.mimeType`: lowercased, not trimmed; nil without a `Content-Type`.
    var mimeType: String? {
        switch contentType {
        case .read(let mimeType, _): return mimeType
        case .fields(let fields):
            guard let read = ContentTypeReading.read(in: fields) else { return make()?.mimeType }
            return read.mimeType
        }
    }
    /// As `HTTPURLResponse.textEncodingName`: the `charset` parameter, lowercased.
    var textEncodingName: String? {
        switch contentType {
        case .read(_, let textEncodingName): return textEncodingName
        case .fields(let fields):
            guard let read = ContentTypeReading.read(in: fields) else { return make()?.textEncodingName }
            return read.textEncodingName
        }
    }
    /// As `HTTPURLResponse.url != nil`.
    let hasURL: Bool
    private let contentType: ContentTypeSource
    private let make: @Sendable () -> HTTPURLResponse?

    /// Where ``mimeType`` and ``textEncodingName`` come from: values already read, or the
    /// head's fields, read when asked (``HTTPResponseSerializer`` with no acceptable content
    /// types never asks, so a plain data GET never scans its head for a `Content-Type`).
    private enum ContentTypeSource: Sendable {
        case read(mimeType: String?, textEncodingName: String?)
        case fields(HTTPHeaders)
    }

    /// The values of `response`, which is also what ``response`` returns.
    init(_ response: HTTPURLResponse) {
        statusCode = response.statusCode
        contentType = .read(mimeType: response.mimeType, textEncodingName: response.textEncodingName)
        hasURL = response.url != nil
        make = { response }
    }

    /// Values read elsewhere (tests); `response` makes the `HTTPURLResponse` with the same
    /// values when asked.
    init(
        statusCode: Int, mimeType: String?, textEncodingName: String?, hasURL: Bool,
        response: @escaping @Sendable () -> HTTPURLResponse?
    ) {
        self.statusCode = statusCode
        self.contentType = .read(mimeType: mimeType, textEncodingName: textEncodingName)
        self.hasURL = hasURL
        self.make = response
    }

    /// A response head's `fields`, whose `Content-Type` is read when a serializer asks (see
    /// ``ContentTypeReading/read(in:)``; a value that reading does not repeat exactly is read
    /// from the `HTTPURLResponse` instead, made then). `response` makes that response with the
    /// same values (once per task: it memoizes on the task).
    init(statusCode: Int, fields: HTTPHeaders, hasURL: Bool, response: @escaping @Sendable () -> HTTPURLResponse?) {
        self.statusCode = statusCode
        self.contentType = .fields(fields)
        self.hasURL = hasURL
        self.make = response
    }

    /// The `HTTPURLResponse`, made now if it was not given (for an error that carries it).
    var response: HTTPURLResponse? { make() }
}

/// A serializer that works from a ``SerializerInput`` (every built-in serializer whose
/// validation is ``HTTPResponseSerializer``'s): the session's path for completed tasks, which
/// makes no `HTTPURLResponse` for a valid response nobody else reads. Its public
/// `serializeResponse(_:data:)` is this with the given response wrapped, so both paths give the
/// same object and the same error.
protocol InputSerializing: ResponseSerializer {
    /// AFN's validation and parsing, reading `input` (nil: no response).
    func serialize(_ input: SerializerInput?, data: Data?) -> SerializedResponse<Output>

    /// ``ResponseSerializer/responseObject(for:data:)`` reading `input`: the object, or the error.
    func responseObject(for input: SerializerInput?, data: Data?) throws(CourierError) -> Output

    /// ``serialize(_:data:)`` with the object as a completed task hands it out: erased, and nil
    /// for a nil wrapped in `Optional`s (``SerializedObject/unwrapped(_:)``). The default
    /// unwraps dynamically; a serializer whose output type is known does it without a cast.
    func serializeForTask(_ input: SerializerInput?, data: Data?) -> (object: (any Sendable)?, error: CourierError?)
}

extension InputSerializing {
    /// ``responseObject(for:data:)`` as `T` (the caller's view of ``ResponseSerializer/Output``,
    /// for an existential); nil only if the output is not a `T`.
    func responseObject<T>(for input: SerializerInput?, data: Data?, as type: T.Type) throws(CourierError) -> T? {
        try responseObject(for: input, data: data) as? T
    }

    func serializeForTask(_ input: SerializerInput?, data: Data?) -> (object: (any Sendable)?, error: CourierError?) {
        let result = serialize(input, data: data)
        return (SerializedObject.unwrapped(result.object.map { $0 as any Sendable }), result.error)
    }

    /// ``serialize(_:data:)`` with the object type erased, for code that holds an
    /// `any ResponseSerializer`.
    func serializeErased(_ input: SerializerInput?, data: Data?) -> SerializedResponse<any Sendable> {
        let result = serialize(input, data: data)
        return SerializedResponse(object: result.object.map { $0 as any Sendable }, error: result.error)
    }
}
