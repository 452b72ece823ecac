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
            return .connectionLost("the server reset the HTTP/2 stream (\(closed.errorCode))")
        case is NIOHTTP2Errors.CreatedStreamAfterGoaway, is NIOHTTP2Errors.NoStreamIDAvailable:
            return http2StreamRefused
        case is NIOHTTP2Errors.IOOnClosedConnection:
            return .connectionLost("the HTTP/2 connection closed")
        case is NIOHTTP2Errors.ExcessivelyLargeHeaderBlock:
            return .protocolViolation("the HTTP/2 header block is larger than allowed")
        default:
            return .protocolViolation("HTTP/2: \(error)")
        }
    }
}
