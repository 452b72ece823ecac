public import Foundation
#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif
import Synchronization

/// AFNetworking's `AFHTTPResponseSerializer`: validates the status code and the MIME type and
/// returns the raw data.
///
/// Validation (only for an `HTTPURLResponse`), in AFN's order:
/// 1. Content type: fails when ``acceptableContentTypes`` is non-nil, the MIME type is not in
///    it, and not (no MIME type and empty data). The error,
///    ``CourierError/unacceptableContentType(_:response:data:)`` ("Request failed:
///    unacceptable content-type: text/html"), is only made when the data is non-empty and the
///    response has a URL; otherwise the response is invalid without an error.
/// 2. Status: fails when ``acceptableStatusCodes`` is non-nil, the code is not in it and the
///    response has a URL: ``CourierError/unacceptableStatusCode(response:data:underlying:)``
///    ("Request failed: not found (404)") with the content-type error as `underlying`.
///
/// Defaults: status codes 200..<300, any content type. Thread-safe: settings live behind a
/// mutex.
public final class HTTPResponseSerializer: ResponseSerializer {
    struct Settings {
        var acceptableStatusCodes: IndexSet? = IndexSet(integersIn: 200..<300) {
            didSet { statusCodes = StatusCodes(acceptableStatusCodes) }
        }
        /// ``acceptableStatusCodes`` as validation reads it, made once per change.
        private(set) var statusCodes = StatusCodes.range(200..<300)
        var acceptableContentTypes: Set<String>? {
            didSet { lowercasedContentTypes = Self.lowercased(acceptableContentTypes) }
        }
        /// ``acceptableContentTypes`` lowercased once per change rather than once per response.
        private(set) var lowercasedContentTypes: Set<String>?

        init(acceptableContentTypes: Set<String>?) {
            self.acceptableContentTypes = acceptableContentTypes
            lowercasedContentTypes = Self.lowercased(acceptableContentTypes)
        }

        private static func lowercased(_ types: Set<String>?) -> Set<String>? {
            types.map { Set($0.map { $0.lowercased() }) }
        }
    }

    /// The acceptable status codes as validation reads them: a single range (the default
    /// 200..<300, or any contiguous set) is checked by comparison; `IndexSet.contains` goes
    /// through `NSIndexSet` on Linux, a cost paid on every response.
    enum StatusCodes {
        case any
        case range(Range<Int>)
        case set(IndexSet)

        init(_ codes: IndexSet?) {
            guard let codes else {
                self = .any
                return
            }
            let ranges = codes.rangeView
            if ranges.count == 1, let only = ranges.first {
                self = .range(only)
            } else if codes.isEmpty {
                self = .range(0..<0)
            } else {
                self = .set(codes)
            }
        }

        /// Whether `code` fails the check (any negative code does, unless every code is accepted).
        func rejects(_ code: Int) -> Bool {
            switch self {
            case .any: return false
            case .range(let range): return code < 0 || !range.contains(code)
            case .set(let codes): return code < 0 || !codes.contains(code)
            }
        }
    }

    /// The outcome of validation: AFN's `BOOL` plus its optional `NSError`.
    struct Validation {
        var isValid: Bool
        var error: CourierError?

        /// Whether the failure includes the content-type check (AFN: "has code
        /// NSURLErrorCannotDecodeContentData" anywhere in the chain), or is invalid with no
        /// error at all: either way serializers don't parse.
        var skipsParsing: Bool {
            guard !isValid else { return false }
            guard let error else { return true }
            var current: CourierError? = error
            while let candidate = current {
                if case .unacceptableContentType = candidate { return true }
                current = candidate.underlyingError
            }
            return false
        }
    }

    private let settings: Mutex<Settings>

    /// Creates a serializer accepting 200..<300 and any content type.
    public convenience init() {
        self.init(acceptableContentTypes: nil)
    }

    /// Creates a serializer accepting 200..<300 and `acceptableContentTypes`.
    public init(acceptableContentTypes: Set<String>?) {
        settings = Mutex(Settings(acceptableContentTypes: acceptableContentTypes))
    }

    /// Status codes that pass validation; nil accepts any. Default 200..<300.
    public var acceptableStatusCodes: IndexSet? {
        get { settings.withLock { $0.acceptableStatusCodes } }
        set { settings.withLock { $0.acceptableStatusCodes = newValue } }
    }

    /// MIME types that pass validation (compared case-insensitively); nil accepts any.
    /// Default nil here; each parsing serializer sets its own list.
    public var acceptableContentTypes: Set<String>? {
        get { settings.withLock { $0.acceptableContentTypes } }
        set { settings.withLock { $0.acceptableContentTypes = newValue } }
    }

    /// Validates `response` as described on the type.
    /// - Throws: ``CourierError/unacceptableStatusCode(response:data:underlying:)`` or
    ///   ``CourierError/unacceptableContentType(_:response:data:)``. A response that is
    ///   invalid only by content type with an empty body (or no URL) does not throw: AFN
    ///   reports no error there either.
    public func validate(_ response: HTTPURLResponse?, data: Data?) throws {
        if let error = validation(response, data: data).error { throw error }
    }

    /// Validates and returns `data` as it is (even when validation fails).
    /// - Throws: the validation error; ``serializeResponse(_:data:)`` returns the data with it.
    public func responseObject(for response: HTTPURLResponse?, data: Data?) throws -> Data? {
        try validate(response, data: data)
        return data
    }

    /// The data and the validation error together (AFN returns the data even when invalid).
    public func serializeResponse(_ response: HTTPURLResponse?, data: Data?) -> SerializedResponse<Data?> {
        serialize(response.map(SerializerInput.init), data: data)
    }

    /// AFN's `validateResponse:data:error:`.
    func validation(_ response: HTTPURLResponse?, data: Data?) -> Validation {
        validation(response.map(SerializerInput.init), data: data)
    }

    /// AFN's `validateResponse:data:error:`, reading `input`; its `HTTPURLResponse` is asked for
    /// only to make an error.
    func validation(_ input: SerializerInput?, data: Data?) -> Validation {
        guard let input else { return Validation(isValid: true, error: nil) }
        let (contentTypes, statusCodes) = settings.withLock { ($0.lowercasedContentTypes, $0.statusCodes) }
        var isValid = true
        var error: CourierError?
        let dataLength = data?.count ?? 0
        if let acceptable = contentTypes {
            let mimeType = input.mimeType?.lowercased()
            let accepted = mimeType.map(acceptable.contains) ?? false
            if !accepted && !(mimeType == nil && dataLength == 0) {
                if dataLength > 0, input.hasURL, let response = input.response {
                    error = .unacceptableContentType(input.mimeType, response: response, data: data)
                }
                isValid = false
            }
        }
        if input.hasURL, statusCodes.rejects(input.statusCode) {
            if let response = input.response {
                error = .unacceptableStatusCode(response: response, data: data, underlying: error)
            }
            isValid = false
        }
        return Validation(isValid: isValid, error: error)
    }
}

extension HTTPResponseSerializer: InputSerializing {
    func serialize(_ input: SerializerInput?, data: Data?) -> SerializedResponse<Data?> {
        SerializedResponse(object: .some(data), error: validation(input, data: data).error)
    }

    func responseObject(for input: SerializerInput?, data: Data?) throws(CourierError) -> Data? {
        if let error = validation(input, data: data).error { throw error }
        return data
    }

    /// As the default, without its dynamic cast: the data boxed as `Data?`, or nil.
    func serializeForTask(_ input: SerializerInput?, data: Data?) -> (object: (any Sendable)?, error: CourierError?) {
        (data.map { Optional.some($0) as any Sendable }, validation(input, data: data).error)
    }
}

extension Data {
    /// Whether a body carries nothing to parse: zero bytes, or the single space Rails'
    /// `head :ok` sends (AFNetworking's check before parsing JSON).
    var isBlankBody: Bool { isEmpty || (count == 1 && first == UInt8(ascii: " ")) }
}
