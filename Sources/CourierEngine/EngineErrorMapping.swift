import NIOCore
import NIOHTTP1
import NIOHTTPCompression
import NIOSSL

/// Turns the errors SwiftNIO, NIOSSL and the decompressor raise into ``EngineError`` cases
/// that say what happened in a user's words.
enum EngineErrorMapping {
    static func map(_ error: any Error, host: String = "") -> EngineError {
        if let engineError = error as? EngineError {
            return engineError
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
}
