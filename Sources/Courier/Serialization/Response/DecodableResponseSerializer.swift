public import Foundation
#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

/// Decodes a JSON body into `T` with `JSONDecoder` (Alamofire's `DecodableResponseSerializer`,
/// on AFNetworking's validation).
///
/// - Acceptable content types: as ``JSONResponseSerializer`` (`application/json`,
///   `text/json`, `text/javascript`); a content-type failure is not decoded.
/// - An empty body (no data, zero bytes, or AFN's single space) gives nil when the status
///   is in ``emptyResponseCodes`` (204, 205) or ``allowsEmptyResponses`` is true (set it for
///   HEAD requests, whose bodies are always empty); any other empty body throws.
/// - A status-only failure still decodes; ``serializeResponse(_:data:)`` returns both.
/// - A decoding error throws
///   ``CourierError/responseSerializationFailed(reason:response:data:underlying:)``.
///
/// Thread-safe: the decoder is created per call from the configured strategies.
public final class DecodableResponseSerializer<T: Decodable & Sendable>: HTTPResponseSerializerWrapper {
    struct Settings {
        var emptyResponseCodes: Set<Int> = [204, 205]
        var allowsEmptyResponses = false
        var makeDecoder: @Sendable () -> JSONDecoder
    }

    /// Holds the validation settings.
    public let base: HTTPResponseSerializer
    private let settings: LockedValue<Settings>

    /// Creates a serializer for `type`; `makeDecoder` builds the decoder for each response
    /// (default: a plain `JSONDecoder`), so strategies can be set without sharing one decoder.
    public init(_ type: T.Type = T.self, makeDecoder: @escaping @Sendable () -> JSONDecoder = { JSONDecoder() }) {
        base = HTTPResponseSerializer(acceptableContentTypes: JSONResponseSerializer.jsonContentTypes)
        settings = LockedValue(Settings(makeDecoder: makeDecoder))
    }

    /// Status codes whose empty bodies give nil. Default `[204, 205]`.
    public var emptyResponseCodes: Set<Int> {
        get { settings.value.emptyResponseCodes }
        set { settings.update { $0.emptyResponseCodes = newValue } }
    }

    /// Whether any empty body gives nil (for HEAD). Default false.
    public var allowsEmptyResponses: Bool {
        get { settings.value.allowsEmptyResponses }
        set { settings.update { $0.allowsEmptyResponses = newValue } }
    }

    /// The decoded value, or nil for an allowed empty body.
    /// - Throws: the validation error, an empty-body error or the decoding error.
    public func responseObject(for response: HTTPURLResponse?, data: Data?) throws -> T? {
        try serializeResponse(response, data: data).get(fallback: nil)
    }

    /// The decoded value and the error together.
    public func serializeResponse(_ response: HTTPURLResponse?, data: Data?) -> SerializedResponse<T?> {
        serialize(response.map(SerializerInput.init), data: data)
    }

    /// The decoded value and the error together, reading `input`.
    func serialize(_ input: SerializerInput?, data: Data?) -> SerializedResponse<T?> {
        let validation = base.validation(input, data: data)
        if validation.skipsParsing { return SerializedResponse(object: .some(nil), error: validation.error) }
        let settings = settings.value
        guard let data, !data.isBlankBody else {
            let allowed = settings.allowsEmptyResponses
                || input.map { settings.emptyResponseCodes.contains($0.statusCode) } ?? false
            if allowed || validation.error != nil {
                return SerializedResponse(object: .some(nil), error: validation.error)
            }
            return SerializedResponse(
                object: .some(nil),
                error: .responseSerializationFailed(
                    reason: "empty body where \(T.self) was expected", response: input?.response, data: data,
                    underlying: nil))
        }
        do {
            let value = try settings.makeDecoder().decode(T.self, from: data)
            return SerializedResponse(object: .some(value), error: validation.error)
        } catch {
            return SerializedResponse(
                object: .some(nil),
                error: .responseSerializationFailed(
                    reason: "decoding \(T.self) failed: \(error)", response: input?.response, data: data,
                    underlying: validation.error))
        }
    }
}

extension DecodableResponseSerializer: InputSerializing {
    func responseObject(for input: SerializerInput?, data: Data?) throws(CourierError) -> T? {
        try serialize(input, data: data).get(fallback: nil)
    }
}
