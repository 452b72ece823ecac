import Courier
import Foundation

/// What `courier ws` reports when it fails: the close code and reason, a refused handshake's
/// status, or the request command's report for an error before the handshake.
enum WebSocketReport {
    static func failure(_ error: any Error, url: URL?, timeout: Double?) -> FailureReport {
        switch error {
        case CourierError.webSocketFailed(_, let failure):
            switch failure {
            case .closed(let code, let reason) where WebSocketCloseCode(rawValue: code)?.isNormal == true:
                return FailureReport(status: .success, message: "closed with \(WebSocketCloseCode.describe(code))\(reason.isEmpty ? "" : ": \(reason)")")
            default:
                return FailureReport(status: .error, message: failure.description)
            }
        case CourierError.webSocketHandshakeFailed(_, let reason):
            return FailureReport(status: .error, message: "the WebSocket handshake failed: \(reason)")
        default:
            return FailureReport(error, url: url, timeout: timeout, maximumRedirects: 0)
        }
    }
}
