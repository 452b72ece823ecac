@testable import CourierEngine
import NIOHTTP2
import Testing

/// The stream send window as RFC 9113 §6.9 keeps it, and how HTTP/2 errors read: who ended the
/// stream, the violation's name, never a source file or line.
@Suite("HTTP/2 send window and violations")
struct HTTP2ProtocolViolationTests {
    @Test func aWindowUpdateUpToTheMaximumIsAccepted() {
        var window = HTTP2SendWindow()
        let increment = HTTP2SendWindow.maximumSize - HTTP2SendWindow.defaultInitialSize
        #expect(window.receiveWindowUpdate(increment: increment, initialWindowSize: 65_535) == .accepted(size: Int(Int32.max)))
        #expect(window.receiveWindowUpdate(increment: 1, initialWindowSize: 65_535) == .overflow(size: Int(Int32.max) + 1))
        // The rejected update is not counted.
        #expect(window.size(initialWindowSize: 65_535) == Int(Int32.max))
    }

    @Test func sentDataMakesRoomForAnUpdate() {
        var window = HTTP2SendWindow()
        #expect(window.receiveWindowUpdate(increment: Int(Int32.max), initialWindowSize: 65_535) == .overflow(size: Int(Int32.max) + 65_535))
        window.sent(65_535)
        #expect(window.receiveWindowUpdate(increment: Int(Int32.max), initialWindowSize: 65_535) == .accepted(size: Int(Int32.max)))
    }

    @Test func theInitialWindowSizeFromSettingsCounts() {
        var window = HTTP2SendWindow()
        #expect(window.receiveWindowUpdate(increment: 1 << 30, initialWindowSize: 1 << 30) == .overflow(size: 1 << 31))
        #expect(window.receiveWindowUpdate(increment: 1 << 30, initialWindowSize: 65_535) == .accepted(size: 65_535 + (1 << 30)))
    }

    @Test func mappedHTTP2ErrorsNameTheViolationAndNoSourceLocation() {
        let errors: [any Error] = [
            NIOHTTP2Errors.excessiveContinuationFrames(),
            NIOHTTP2Errors.excessivelyLargeHeaderBlock(),
            NIOHTTP2Errors.invalidFlowControlWindowSize(delta: 1, currentWindowSize: Int(Int32.max)),
        ]
        for error in errors {
            let mapped = EngineErrorMapping.map(error)
            guard case .http2ProtocolViolation(let violation) = mapped else {
                Issue.record("expected a violation, got \(mapped)")
                continue
            }
            #expect(violation.endedBy == .courier)
            #expect(violation.name == String(describing: type(of: error)))
            #expect(mapped.description.hasPrefix("Courier closed the HTTP/2 connection: "))
            #expect(!mapped.description.contains(".swift"), "\(mapped)")
            #expect(!mapped.description.contains("location"), "\(mapped)")
            #expect(!mapped.description.contains("line:"), "\(mapped)")
        }
    }

    @Test func aResetFromTheServerSaysSoWithItsCode() {
        let mapped = EngineErrorMapping.map(NIOHTTP2Errors.streamClosed(streamID: 1, errorCode: .internalError))
        #expect(mapped == .connectionLost("the server reset the HTTP/2 stream with INTERNAL_ERROR"))
    }

    @Test func descriptions() {
        let reset = HTTP2ProtocolViolation(
            name: "InvalidFlowControlWindowSize", endedBy: .courier, scope: .stream, errorCode: "FLOW_CONTROL_ERROR",
            reason: "a WINDOW_UPDATE took the window past 2^31-1")
        #expect(
            reset.description
                == "Courier reset the HTTP/2 stream: a WINDOW_UPDATE took the window past 2^31-1 (InvalidFlowControlWindowSize, FLOW_CONTROL_ERROR)")
        #expect(EngineErrorMapping.codeName(.flowControlError) == "FLOW_CONTROL_ERROR")
        #expect(EngineErrorMapping.codeName(HTTP2ErrorCode(networkCode: 153)) == "error code 153")
    }
}
