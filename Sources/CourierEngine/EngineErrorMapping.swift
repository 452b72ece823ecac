import NIOCore
import NIOHTTP1
import NIOHTTP2
import NIOHTTPCompression
import NIOSSL

/// Turns the errors SwiftNIO, NIOSSL and the decompressor raise into ``EngineError`` cases
/// that say what happened in a user's words.
enum EngineErrorMapping {
    /// An HTTP/2 stream the server did not process (`REFUSED_STREAM`, or above the last
    /// stream id of its `GOAWAY`): safe to send again on another connection.
    static let http2StreamRefused = EngineError.connectionLost("the server refused the HTTP/2 stream without processing it")
    /// A `421 Misdirected Request` on another host's (coalesced) connection, when the request
    /// cannot be sent again on its own.
    static let misdirectedOnCoalescedConnection = EngineError.connectionLost(
        "the server answered 421 Misdirected Request on a connection shared with another host")

    static func map(_ error: any Error, host: String = "") -> EngineError {
        if let engineError = error as? EngineError {
            return engineError
        }
        if let http2Error = error as? any NIOHTTP2Error {
            return mapHTTP2(http2Error)
        }
        if let parserError = error as? HTTPParserError {
            switch parserError {
            case .invalidEOFState:
                return .connectionLost("the connection closed before the response was complete")
            default:
                return .protocolViolation("\(parserError)")
            }
        }
        if error is NIOHTTPDecompression.DecompressionError {
            return .decompressionLimitExceeded("the compressed body expanded past the allowed ratio")
        }
        if let extra = error as? NIOHTTPDecompression.ExtraDecompressionError {
            if extra == .truncatedData {
                return .connectionLost("the compressed body was truncated")
            }
            return .protocolViolation("bad compressed body: \(extra)")
        }
        if let sslError = error as? NIOSSLError {
            switch sslError {
            case .uncleanShutdown:
                return .connectionLost("the TLS connection closed without close_notify")
            case .handshakeFailed(let reason):
                let text = "\(reason)"
                if text.contains("CERTIFICATE_VERIFY_FAILED") {
                    return .serverTrustRejected(host: host, reason: "the certificate chain did not verify (\(text))")
                }
                return .tlsHandshakeFailed(text)
            default:
                return .tlsHandshakeFailed("\(sslError)")
            }
        }
        if let extra = error as? NIOSSLExtraError, extra == .failedToValidateHostname {
            return .serverTrustRejected(host: host, reason: "the certificate is not valid for \(host)")
        }
        if let ioError = error as? IOError {
            switch ioError.errnoCode {
            case 104:  // ECONNRESET
                return .connectionLost("connection reset by peer")
            case 32:  // EPIPE
                return .connectionLost("broken pipe")
            default:
                return .connectionLost("\(ioError)")
            }
        }
        if error is ChannelError {
            return .connectionLost("\(error)")
        }
        return .connectionLost("\(error)")
    }

    private static func mapHTTP2(_ error: any NIOHTTP2Error) -> EngineError {
        switch error {
        case let closed as NIOHTTP2Errors.StreamClosed:
            if closed.errorCode == .refusedStream { return http2StreamRefused }
            // A reset Courier sent is attributed before this (``HTTP2ConnectionObserver``).
            let reset = HTTP2ProtocolViolation(
                name: "RST_STREAM", endedBy: .server, scope: .stream, errorCode: codeName(closed.errorCode), reason: "")
            return .connectionLost(reset.description)
        case is NIOHTTP2Errors.CreatedStreamAfterGoaway, is NIOHTTP2Errors.NoStreamIDAvailable:
            return http2StreamRefused
        case is NIOHTTP2Errors.IOOnClosedConnection:
            return .connectionLost("the HTTP/2 connection closed")
        default:
            return .http2ProtocolViolation(violation(error, scope: .connection))
        }
    }

    /// An HTTP/2 error NIOHTTP2 raised on Courier's side (the server's frames broke the
    /// protocol and Courier ended the stream or connection), named by its type and described
    /// in words: never its `description`, which carries a source file and line.
    static func violation(_ error: any Error, scope: HTTP2ProtocolViolation.Scope, errorCode: String? = nil) -> HTTP2ProtocolViolation {
        let name = String(describing: type(of: error))
        return HTTP2ProtocolViolation(name: name, endedBy: .courier, scope: scope, errorCode: errorCode, reason: reason(for: error))
    }

    /// What an HTTP/2 error means, in words.
    private static func reason(for error: any Error) -> String {
        switch error {
        case is NIOHTTP2Errors.ExcessivelyLargeHeaderBlock:
            return "the server's header block is larger than the allowed header list size"
        case is NIOHTTP2Errors.ExcessiveContinuationFrames:
            return "the server split a header block into too many CONTINUATION frames"
        case is NIOHTTP2Errors.InvalidFlowControlWindowSize:
            return "a WINDOW_UPDATE or SETTINGS took a flow-control window past 2^31-1"
        case is NIOHTTP2Errors.FlowControlViolation:
            return "the server sent more DATA than the flow-control window allowed"
        case is NIOHTTP2Errors.InvalidWindowIncrementSize:
            return "the server sent a WINDOW_UPDATE with an increment of 0"
        case is NIOHTTP2Errors.ContentLengthViolated, is NIOHTTP2Errors.ContentLengthHeadersMismatch,
            is NIOHTTP2Errors.ContentLengthHeaderNegative, is NIOHTTP2Errors.ContentLengthHeaderMalformedValue:
            return "the response body does not match its content-length"
        case is NIOHTTP2Errors.MissingPseudoHeader, is NIOHTTP2Errors.DuplicatePseudoHeader,
            is NIOHTTP2Errors.PseudoHeaderAfterRegularHeader, is NIOHTTP2Errors.UnknownPseudoHeader,
            is NIOHTTP2Errors.UnsupportedPseudoHeader, is NIOHTTP2Errors.InvalidPseudoHeaders,
            is NIOHTTP2Errors.InvalidStatusValue, is NIOHTTP2Errors.InvalidPseudoHeaderValue:
            return "the server sent a malformed response head (pseudo-header fields)"
        case is NIOHTTP2Errors.InvalidHTTP2HeaderFieldName, is NIOHTTP2Errors.InvalidHTTP2HeaderFieldValue,
            is NIOHTTP2Errors.ForbiddenHeaderField, is NIOHTTP2Errors.TrailersWithoutEndStream:
            return "the server sent a malformed header field"
        case is NIOHTTP2Errors.ExcessiveEmptyDataFrames, is NIOHTTP2Errors.ExcessiveRSTFrames,
            is NIOHTTP2Errors.ExcessiveControlFrames, is NIOHTTP2Errors.ExcessiveStreamErrors,
            is NIOHTTP2Errors.ExcessiveNumberOfGlitches:
            return "the server flooded the connection with frames"
        case is NIOHTTP2Errors.BadStreamStateTransition:
            return "the server sent a frame the stream's state does not allow"
        case is NIOHTTP2Errors.UnableToParseFrame:
            return "the server sent a frame that does not parse"
        case is NIOHTTP2Errors.PushInViolationOfSetting:
            return "the server pushed a stream although push is disabled"
        case is NIOHTTP2Errors.InvalidSetting, is NIOHTTP2Errors.ReceivedBadSettings:
            return "the server sent an invalid SETTINGS value"
        case is NIOHTTP2Errors.MissingPreface:
            return "the server did not start with a SETTINGS frame"
        default:
            return "the server's frames broke HTTP/2"
        }
    }

    /// The RFC 9113 name of an HTTP/2 error code (`FLOW_CONTROL_ERROR`), or its number.
    static func codeName(_ code: HTTP2ErrorCode) -> String {
        let names = [
            "NO_ERROR", "PROTOCOL_ERROR", "INTERNAL_ERROR", "FLOW_CONTROL_ERROR", "SETTINGS_TIMEOUT", "STREAM_CLOSED",
            "FRAME_SIZE_ERROR", "REFUSED_STREAM", "CANCEL", "COMPRESSION_ERROR", "CONNECT_ERROR", "ENHANCE_YOUR_CALM",
            "INADEQUATE_SECURITY", "HTTP_1_1_REQUIRED",
        ]
        let number = Int(code.networkCode)
        return names.indices.contains(number) ? names[number] : "error code \(number)"
    }
}
