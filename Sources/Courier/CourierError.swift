public import CourierEngine
public import Foundation
#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

/// Everything that can go wrong in Courier, as one error type.
///
/// Each case carries what AFNetworking puts in an `NSError`'s `userInfo`: the failing URL,
/// the `HTTPURLResponse`, the response data and the underlying error. Messages read like
/// AFNetworking's (`Request failed: not found (404)`), through both ``description`` and
/// `LocalizedError.errorDescription`.
///
/// Validation errors chain as in AFNetworking: when both the status code and the content type
/// are unacceptable, the thrown error is ``unacceptableStatusCode(response:data:underlying:)``
/// with the ``unacceptableContentType(_:response:data:)`` error as its `underlying` value.
public indirect enum CourierError: Error, Sendable, CustomStringConvertible, LocalizedError {
    /// Why a request could not be built (AFN's `AFURLRequestSerializationErrorDomain`).
    public enum RequestSerializationReason: Sendable, Equatable, CustomStringConvertible {
        /// The URL string did not parse into a URL.
        case invalidURL(String)
        /// A value can't be written as JSON (for example a non-finite number).
        case invalidJSONValue(String)
        /// A value can't be written as a property list (for example `null`).
        case invalidPropertyListValue(String)
        /// Not produced any more: an error thrown by the custom `queryStringSerialization`
        /// closure is rethrown unchanged. Kept for source compatibility.
        case queryStringSerializationFailed(String)
        /// The parameters could not be encoded in the serializer's `stringEncoding`.
        case stringEncodingFailed(String.Encoding)
        /// Multipart requests need a body: GET and HEAD are refused.
        case multipartMethodNotAllowed(String)
        /// A multipart file part: no file at the path.
        case fileNotFound(path: String)
        /// A multipart file part: the path names a directory or a special file.
        case notARegularFile(path: String)
        /// A multipart file part: the file exists but can't be opened for reading.
        case fileNotReadable(path: String)
        /// A multipart file part: the URL is not a `file:` URL.
        case notAFileURL(String)
        /// An `Encodable` value could not be turned into ``Parameters``.
        case parameterEncodingFailed(String)
        /// Writing a multipart body to a file failed.
        case bodyFileWriteFailed(path: String, reason: String)
        /// The multipart body could not be read (a stream ended early or failed).
        case bodyStreamFailed(String)
        /// An `Encodable` request body could not be encoded (the encoder's error, described).
        case bodyEncodingFailed(String)

        /// A readable reason.
        public var description: String {
            switch self {
            case .invalidURL(let string): return "invalid URL string: \(string)"
            case .invalidJSONValue(let reason): return "invalid JSON value: \(reason)"
            case .invalidPropertyListValue(let reason): return "invalid property list value: \(reason)"
            case .queryStringSerializationFailed(let reason): return "query string serialization failed: \(reason)"
            case .stringEncodingFailed(let encoding): return "parameters can't be encoded as \(encoding)"
            case .multipartMethodNotAllowed(let method): return "multipart requests can't use \(method)"
            case .fileNotFound(let path): return "no file at \(path)"
            case .notARegularFile(let path): return "not a regular file: \(path)"
            case .fileNotReadable(let path): return "file is not readable: \(path)"
            case .notAFileURL(let url): return "not a file URL: \(url)"
            case .parameterEncodingFailed(let reason): return "parameter encoding failed: \(reason)"
            case .bodyFileWriteFailed(let path, let reason): return "could not write the body to \(path): \(reason)"
            case .bodyStreamFailed(let reason): return "the body stream failed: \(reason)"
            case .bodyEncodingFailed(let reason): return "the request body could not be encoded: \(reason)"
            }
        }
    }

    /// The request could not be built. AFN: `AFURLRequestSerializationErrorDomain`.
    case requestSerializationFailed(RequestSerializationReason)
    /// The status code is outside `acceptableStatusCodes` (AFN `NSURLErrorBadServerResponse`,
    /// -1011). `underlying` holds the content-type error when that check failed too.
    case unacceptableStatusCode(response: HTTPURLResponse, data: Data?, underlying: CourierError?)
    /// The MIME type (nil when the response has none) is outside `acceptableContentTypes`
    /// (AFN `NSURLErrorCannotDecodeContentData`, -1016).
    case unacceptableContentType(String?, response: HTTPURLResponse, data: Data?)
    /// The body could not be parsed (`reason` says how); `underlying` is the validation error
    /// that was also found, if any (AFN chains it as `NSUnderlyingErrorKey`).
    case responseSerializationFailed(reason: String, response: HTTPURLResponse?, data: Data?, underlying: CourierError?)
    /// The server's certificate chain was rejected by the security policy or the trust store.
    /// `url` is the request's URL and `chain` what the server presented (leaf first), when
    /// known; bridged to `NSError` this is `NSURLErrorDomain` −1202 with both in `userInfo`.
    case serverTrustRejected(host: String, reason: String, url: URL? = nil, chain: [Certificate] = [])
    /// The request ran out of time.
    case timedOut(url: URL?, reason: String)
    /// No connection could be made (DNS failure, refused, unreachable).
    case cannotConnect(url: URL?, reason: String)
    /// The connection broke before the response was complete.
    case connectionLost(url: URL?, reason: String)
    /// More redirects than the limit allows.
    case tooManyRedirects(url: URL?, limit: Int)
    /// A redirect the session will not follow although it follows redirects: its `Location`
    /// names a scheme other than http and https (`file:`, `ftp:`, `data:`, …), as curl and
    /// browsers refuse. `url` is the URL that answered with the redirect.
    case unfollowableRedirect(url: URL?, location: String)
    /// The task was cancelled.
    case cancelled(url: URL?)
    /// A finished download could not be moved to its destination.
    case cannotMoveDownloadedFile(from: URL, to: URL, reason: String)
    /// Any other engine failure (invalid header, protocol violation, shut down, ...).
    case engine(EngineError)
    /// Data given as download resume data is not (`reason` says why).
    case invalidResumeData(String)
    /// A redirect (307/308) or an authentication retry must send the body again, but it came
    /// from a stream that can't be replayed and no new one was provided (set the need-new-body-
    /// stream block).
    case requestBodyNotReplayable(url: URL?)
    /// A download's file could not be written.
    case cannotWriteDownloadFile(path: String, reason: String)
    /// A security policy that can't be used where it was set (AFN's "Invalid Security Policy"
    /// exception): pinning on a manager whose base URL is not https.
    case invalidSecurityPolicy(reason: String)
    /// Bytes or text that are not an X.509 certificate (`reason` says what is wrong).
    case invalidCertificate(reason: String)
    /// A certificate file (or folder of certificates) could not be read.
    case certificateFileUnreadable(path: String, reason: String)
    /// A certificate file was read but does not hold a certificate (DER or PEM).
    case invalidCertificateFile(path: String, reason: String)
    /// The session's TLS settings can't be used (a trust root or client identity that doesn't
    /// load); every task of the manager fails with this before connecting anywhere.
    case invalidTLSConfiguration(reason: String)
    /// A data or upload task's response body is larger than
    /// ``SessionConfiguration/maximumResponseBodySize`` (`limit`): its `Content-Length` said so
    /// (`contentLength`), or `received` bytes arrived. The transfer was cancelled.
    case responseBodyTooLarge(url: URL?, limit: Int64, contentLength: Int64?, received: Int64)
    /// A resumed download's response can't continue its partial file without corrupting it: a
    /// `206` with a malformed `Content-Range`, starting elsewhere than the requested offset, or
    /// with another length than known; or a `200` (the whole resource) when
    /// ``DownloadResumeData/allowsRestart`` is false. Also any download's `206` to a request
    /// without `Range` (a resume that starts over, or a plain download): HTTP forbids it, and its
    /// bytes are not the whole resource. The partial file is left as it was.
    case invalidResumeResponse(url: URL?, reason: String)
    /// Nothing usable is stored in ``SessionConfiguration/cache`` for the request and it may
    /// not go to the network: its `cachePolicy` is `.returnCacheDataDontLoad`, or it carries
    /// `Cache-Control: only-if-cached` (URLSession's `NSURLErrorResourceUnavailable`).
    /// `reason` names which. Nothing was sent.
    case notCached(url: URL?, reason: String)
    /// `NetworkReachabilityManager(address:)` was given something that is not an IPv4 or IPv6
    /// address literal (the text given).
    case invalidReachabilityAddress(String)
    /// A WebSocket's opening handshake was refused: the server answered with another status
    /// than `101` (`200` for a socket that is an HTTP/2 stream; `response` says which), redirected it (a WebSocket follows no redirect, as in
    /// browsers), or sent a `101` that does not complete the handshake (a wrong
    /// `Sec-WebSocket-Accept`, a subprotocol or extension that was not offered). `reason` says which.
    case webSocketHandshakeFailed(response: HTTPURLResponse?, reason: String)
    /// An open WebSocket failed: the server broke the protocol (Courier closed with 1002, 1007
    /// or 1009), closed with a code other than 1000 or 1001, stopped answering pings, or the
    /// connection ended without a close frame (1006). `WebSocketError` says which.
    case webSocketFailed(url: URL?, error: WebSocketError)
    /// An HSTS file (``HSTSStore/init(contentsOf:maximumEntries:clock:)``,
    /// ``HSTSStore/write(to:)``) could not be read or written: it is not a regular file, is
    /// larger than 16 MiB, is not UTF-8 text, or the system refused (`reason` says which).
    case hstsFileFailed(path: String, reason: String)

    /// The HTTP response attached to the error, if any (AFN's `…error.response` key).
    public var response: HTTPURLResponse? {
        switch self {
        case .unacceptableStatusCode(let response, _, _), .unacceptableContentType(_, let response, _):
            return response
        case .responseSerializationFailed(_, let response, _, let underlying):
            return response ?? underlying?.response
        case .webSocketHandshakeFailed(let response, _):
            return response
        default: return nil
        }
    }

    /// The response data attached to the error, if any (AFN's `…error.data` key).
    public var responseData: Data? {
        switch self {
        case .unacceptableStatusCode(_, let data, _), .unacceptableContentType(_, _, let data): return data
        case .responseSerializationFailed(_, _, let data, let underlying): return data ?? underlying?.responseData
        default: return nil
        }
    }

    /// The chained error (AFN's `NSUnderlyingErrorKey`), if any.
    public var underlyingError: CourierError? {
        switch self {
        case .unacceptableStatusCode(_, _, let underlying), .responseSerializationFailed(_, _, _, let underlying):
            return underlying
        default: return nil
        }
    }

    /// The URL that failed (AFN's `NSURLErrorFailingURLErrorKey`), if known.
    public var failingURL: URL? {
        switch self {
        case .timedOut(let url, _), .cannotConnect(let url, _), .connectionLost(let url, _),
            .tooManyRedirects(let url, _), .unfollowableRedirect(let url, _), .cancelled(let url), .responseBodyTooLarge(let url, _, _, _),
            .notCached(let url, _), .serverTrustRejected(_, _, let url, _), .webSocketFailed(let url, _):
            return url
        default: return response?.url
        }
    }

    /// AFNetworking's wording, e.g. `Request failed: not found (404)`.
    public var description: String {
        switch self {
        case .requestSerializationFailed(let reason):
            return "Request serialization failed: \(reason)"
        case .unacceptableStatusCode(let response, _, _):
            let text = HTTPURLResponse.localizedString(forStatusCode: response.statusCode).lowercased()
            return "Request failed: \(text) (\(response.statusCode))"
        case .unacceptableContentType(let mimeType, _, _):
            return "Request failed: unacceptable content-type: \(mimeType ?? "(null)")"
        case .responseSerializationFailed(let reason, _, _, _):
            return "Response serialization failed: \(reason)"
        case .serverTrustRejected(let host, let reason, _, _):
            return "The certificate for this server is invalid. You might be connecting to a server that is pretending to be "
                + "“\(host)” which could put your confidential information at risk. Reason: \(reason)"
        case .timedOut(_, let reason): return "The request timed out: \(reason)"
        case .cannotConnect(_, let reason): return "Could not connect to the server: \(reason)"
        case .connectionLost(_, let reason): return "The network connection was lost: \(reason)"
        case .tooManyRedirects(_, let limit): return "Too many HTTP redirects (more than \(limit))"
        case .unfollowableRedirect(_, let location):
            return "Will not follow a redirect to \(location): only http and https redirects are followed"
        case .cancelled: return "cancelled"
        case .cannotMoveDownloadedFile(let from, let to, let reason):
            return "Could not move the downloaded file from \(from.path) to \(to.path): \(reason)"
        case .engine(let error): return error.description
        case .invalidResumeData(let reason): return "Invalid resume data: \(reason)"
        case .requestBodyNotReplayable(let url):
            return "The request body of \(url?.absoluteString ?? "the request") is a stream that can't be sent again; set a need-new-body-stream block"
        case .cannotWriteDownloadFile(let path, let reason): return "Could not write the download to \(path): \(reason)"
        case .invalidSecurityPolicy(let reason): return "Invalid Security Policy: \(reason)"
        case .invalidCertificate(let reason): return "Invalid certificate: \(reason)"
        case .certificateFileUnreadable(let path, let reason):
            return "Could not read the certificate file \(path): \(reason)"
        case .invalidCertificateFile(let path, let reason):
            return "The file \(path) does not hold a valid certificate: \(reason)"
        case .invalidTLSConfiguration(let reason):
            return "Invalid TLS configuration: \(reason)"
        case .responseBodyTooLarge(let url, let limit, let contentLength, let received):
            let size = contentLength.map { "is \($0) bytes (Content-Length)" } ?? "grew past it (\(received) bytes received)"
            return "The response body of \(url?.absoluteString ?? "the request") is larger than the limit of \(limit) bytes "
                + "(SessionConfiguration.maximumResponseBodySize): it \(size)"
        case .invalidResumeResponse(let url, let reason):
            return "Can't resume the download of \(url?.absoluteString ?? "the resource"): \(reason)"
        case .notCached(let url, let reason):
            return "No cached response for \(url?.absoluteString ?? "the request") and it may not be loaded: \(reason)"
        case .invalidReachabilityAddress(let text):
            return "Not an IPv4 or IPv6 address: \"\(text)\" (use NetworkReachabilityManager(domain:) for a host name)"
        case .webSocketHandshakeFailed(_, let reason):
            return "The WebSocket handshake failed: \(reason)"
        case .webSocketFailed(_, let error):
            return error.description
        case .hstsFileFailed(let path, let reason):
            return "Could not use the HSTS file \(path): \(reason)"
        }
    }

    /// Same as ``description``.
    public var errorDescription: String? { description }
}
