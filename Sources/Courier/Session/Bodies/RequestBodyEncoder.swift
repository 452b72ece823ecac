public import Foundation

/// Turns an `Encodable` value into a request body, for the async verbs that take a `body:`
/// (``HTTPSessionManager/post(_:body:encoder:headers:as:decoder:interceptor:)`` and its kin).
///
/// The bytes the encoder returns are sent exactly as they are: Courier does not parse them
/// again, so keys stay in the order the encoder wrote them (`JSONEncoder` with `.sortedKeys`
/// sorts them, without it they come in the encoder's own order) and any top-level value the
/// encoder accepts (an array, a string) is sent. `JSONEncoder` and `PropertyListEncoder`
/// conform; conform your own type to send another format.
///
/// Called once per request, on the calling task, before anything is sent.
public protocol RequestBodyEncoder: Sendable {
    /// The `Content-Type` sent with the body, unless the call's `headers` give one.
    var contentType: String { get }

    /// The body for `value`.
    /// - Throws: any error; the call then fails with
    ///   ``CourierError/RequestSerializationReason/bodyEncodingFailed(_:)`` and nothing is sent.
    func encode<T: Encodable>(_ value: T) throws -> Data
}

extension JSONEncoder: RequestBodyEncoder {
    /// `application/json`.
    public var contentType: String { "application/json" }
}

extension PropertyListEncoder: RequestBodyEncoder {
    /// `application/x-plist` (what ``PropertyListRequestSerializer`` sends).
    public var contentType: String { "application/x-plist" }
}
