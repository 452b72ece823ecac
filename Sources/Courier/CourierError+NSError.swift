public import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `CourierError` as an `NSError`, the way AFNetworking's errors look.
///
/// `error as NSError` is in `NSURLErrorDomain` with URLSession's codes: a rejected certificate
/// is −1202 (`NSURLErrorServerCertificateUntrusted`) with Apple's text, a timeout −1001, an
/// unacceptable status code −1011, an unacceptable content type −1016, and so on; a failure
/// URLSession has no code for gets a small positive code of Courier's. `userInfo` carries the
/// failing URL and its string, the response and its data under AFNetworking's keys, the
/// chained error, and for a rejected certificate the chain the server presented
/// (``CourierError/peerCertificateChainErrorKey``).
///
/// Foundation bridges every value of a type into one domain, so ``nsError`` is there too: the
/// same code and `userInfo` in the domain AFNetworking itself uses for the case (its
/// serialization domains for validation and request building, ``courierErrorDomain`` for
/// Courier's own failures).
///
/// The codes are Apple's values, written out: Linux's Foundation numbers some of its
/// `NSURLError…` constants differently.
extension CourierError: CustomNSError {
    /// Courier's own error domain, for failures URLSession has no code for.
    public static let courierErrorDomain = "com.courier.error"
    /// AFNetworking's `AFURLResponseSerializationErrorDomain`: unacceptable status codes and
    /// content types.
    public static let responseSerializationErrorDomain = "com.alamofire.error.serialization.response"
    /// AFNetworking's `AFURLRequestSerializationErrorDomain`: requests that could not be built.
    public static let requestSerializationErrorDomain = "com.alamofire.error.serialization.request"
    /// AFNetworking's `AFNetworkingOperationFailingURLResponseErrorKey`: the `HTTPURLResponse`.
    public static let failingURLResponseErrorKey = "com.alamofire.serialization.response.error.response"
    /// AFNetworking's `AFNetworkingOperationFailingURLResponseDataErrorKey`: the response body.
    public static let failingURLResponseDataErrorKey = "com.alamofire.serialization.response.error.data"
    /// The key of the failing URL's string, `NSURLErrorFailingURLStringErrorKey`'s value
    /// (`"NSErrorFailingURLStringKey"`; Linux's Foundation marks that constant deprecated).
    public static let failingURLStringErrorKey = "NSErrorFailingURLStringKey"
    /// The certificates the server presented, leaf first, as `[Certificate]` (where Apple's
    /// platforms put a `SecTrust` under `NSURLErrorFailingURLPeerTrustErrorKey`, which Linux
    /// doesn't have).
    public static let peerCertificateChainErrorKey = "CourierPeerCertificateChain"

    /// The domain of `error as NSError`: `NSURLErrorDomain`.
    public static var errorDomain: String { NSURLErrorDomain }

    /// This error as AFNetworking would build it: ``errorCode`` and ``errorUserInfo`` in
    /// ``domain``.
    public var nsError: NSError {
        NSError(domain: domain, code: errorCode, userInfo: errorUserInfo)
    }

    /// The domain AFNetworking uses for this case: `NSURLErrorDomain` for transport failures,
    /// its serialization domains for validation and request building, Courier's otherwise.
    public var domain: String {
        switch self {
        case .serverTrustRejected, .timedOut, .cannotConnect, .connectionLost, .tooManyRedirects, .cancelled,
            .cannotMoveDownloadedFile, .requestBodyNotReplayable, .cannotWriteDownloadFile, .responseBodyTooLarge,
            .notCached, .unfollowableRedirect:
            return NSURLErrorDomain
        case .engine(let error):
            return Self.urlErrorCode(for: error) == nil ? Self.courierErrorDomain : NSURLErrorDomain
        case .unacceptableStatusCode, .unacceptableContentType:
            return Self.responseSerializationErrorDomain
        case .requestSerializationFailed:
            return Self.requestSerializationErrorDomain
        case .responseSerializationFailed, .invalidResumeData, .invalidSecurityPolicy, .invalidCertificate,
            .certificateFileUnreadable, .invalidCertificateFile, .invalidTLSConfiguration, .invalidResumeResponse,
            .invalidReachabilityAddress, .webSocketHandshakeFailed, .webSocketFailed, .hstsFileFailed:
            return Self.courierErrorDomain
        }
    }

    /// The `NSError` code: URLSession's value in `NSURLErrorDomain`
    /// (`NSURLErrorServerCertificateUntrusted` −1202, `NSURLErrorTimedOut` −1001, …), AFN's
    /// (−1011, −1016) for validation, a stable positive number in Courier's domain.
    public var errorCode: Int {
        switch self {
        case .serverTrustRejected: return -1202  // NSURLErrorServerCertificateUntrusted
        case .timedOut: return -1001  // NSURLErrorTimedOut
        case .cannotConnect: return -1004  // NSURLErrorCannotConnectToHost
        case .connectionLost: return -1005  // NSURLErrorNetworkConnectionLost
        case .tooManyRedirects: return -1007  // NSURLErrorHTTPTooManyRedirects
        case .unfollowableRedirect: return -1002  // NSURLErrorUnsupportedURL
        case .cancelled: return -999  // NSURLErrorCancelled
        case .cannotMoveDownloadedFile: return -3005  // NSURLErrorCannotMoveFile
        case .requestBodyNotReplayable: return -1021  // NSURLErrorRequestBodyStreamExhausted
        case .cannotWriteDownloadFile: return -3003  // NSURLErrorCannotWriteToFile
        case .responseBodyTooLarge: return -1103  // NSURLErrorDataLengthExceedsMaximum
        case .notCached: return -1008  // NSURLErrorResourceUnavailable
        case .unacceptableStatusCode: return -1011  // NSURLErrorBadServerResponse
        case .unacceptableContentType: return -1016  // NSURLErrorCannotDecodeContentData
        case .requestSerializationFailed: return -1016  // AFN's code for a request it could not build
        case .engine(let error): return Self.urlErrorCode(for: error) ?? 1
        case .responseSerializationFailed: return 2
        case .invalidResumeData: return 3
        case .invalidSecurityPolicy: return 4
        case .invalidCertificate: return 5
        case .certificateFileUnreadable: return 6
        case .invalidCertificateFile: return 7
        case .invalidTLSConfiguration: return 8
        case .invalidResumeResponse: return 9
        case .invalidReachabilityAddress: return 10
        case .webSocketHandshakeFailed: return 11
        case .webSocketFailed: return 12
        case .hstsFileFailed: return 13
        }
    }

    /// What AFNetworking and URLSession put in `userInfo`: the description, the failing URL
    /// and its string, the response and its data, the underlying error, and for a rejected
    /// certificate Apple's text and the server's chain.
    public var errorUserInfo: [String: Any] {
        var info: [String: Any] = [NSLocalizedDescriptionKey: localizedNSErrorDescription]
        if let url = failingURL {
            info[NSURLErrorFailingURLErrorKey] = url
            info[Self.failingURLStringErrorKey] = url.absoluteString
        }
        if let response {
            info[Self.failingURLResponseErrorKey] = response
        }
        if let responseData {
            info[Self.failingURLResponseDataErrorKey] = responseData
        }
        if let underlyingError {
            info[NSUnderlyingErrorKey] = underlyingError as NSError
        }
        if case .serverTrustRejected(_, let reason, _, let chain) = self {
            info[Self.peerCertificateChainErrorKey] = chain
            info[NSLocalizedFailureReasonErrorKey] = reason
        }
        return info
    }

    /// `NSLocalizedDescriptionKey`: Apple's sentence for a rejected certificate (without
    /// Courier's reason, which goes under `NSLocalizedFailureReasonErrorKey`), the
    /// ``description`` otherwise.
    private var localizedNSErrorDescription: String {
        if case .serverTrustRejected(let host, _, _, _) = self {
            return "The certificate for this server is invalid. You might be connecting to a server that is pretending to be "
                + "“\(host)” which could put your confidential information at risk."
        }
        return description
    }

    /// URLSession's code for an engine failure it has one for.
    private static func urlErrorCode(for error: EngineError) -> Int? {
        switch error {
        case .invalidURL: return -1000  // NSURLErrorBadURL
        case .unsupportedScheme: return -1002  // NSURLErrorUnsupportedURL
        case .dnsFailure: return -1003  // NSURLErrorCannotFindHost
        case .cannotConnect, .proxyFailed: return -1004  // NSURLErrorCannotConnectToHost
        case .tlsHandshakeFailed: return -1200  // NSURLErrorSecureConnectionFailed
        case .serverTrustRejected: return -1202  // NSURLErrorServerCertificateUntrusted
        case .timedOut: return -1001  // NSURLErrorTimedOut
        case .connectionLost: return -1005  // NSURLErrorNetworkConnectionLost
        case .cancelled: return -999  // NSURLErrorCancelled
        case .protocolViolation, .http2ProtocolViolation, .decompressionLimitExceeded:
            return -1011  // NSURLErrorBadServerResponse
        case .invalidHeader, .invalidBody, .shutDown:
            return nil
        }
    }
}
