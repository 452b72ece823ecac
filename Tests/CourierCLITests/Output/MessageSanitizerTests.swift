import Foundation
import Testing

@testable import courier

/// What `courier` prints is cleaned first: plain strings in, plain strings out.
@Suite("MessageSanitizer")
struct MessageSanitizerTests {
    @Test("URL passwords are dropped, the user kept; URLs without one are untouched")
    func passwords() {
        #expect(MessageSanitizer.withoutPasswords("for http://alice:s3cret@host:8080/x?y=1 now")
            == "for http://alice@host:8080/x?y=1 now")
        #expect(MessageSanitizer.withoutPasswords("https://:pw@h/ and HTTP://u:p@ss@h2/") == "https://@h/ and HTTP://u@h2/")
        #expect(MessageSanitizer.withoutPasswords("http://alice@host/ http://host:80/a:b@c") == "http://alice@host/ http://host:80/a:b@c")
    }

    @Test("a user name holding '@' does not hide the password after it")
    func userNameWithAnAt() {
        // The host follows the authority's last '@' (as the engine reads it), so the user is
        // `a@b` and the password `c`.
        #expect(MessageSanitizer.withoutPasswords("to http://a@b:c@h/x now") == "to http://a@b@h/x now")
        #expect(MessageSanitizer.withoutPasswords("http://me@corp.example:hunter2@h:8080") == "http://me@corp.example@h:8080")
        #expect(MessageSanitizer.withoutPasswords("http://a@b@h/") == "http://a@b@h/")
    }

    @Test("SwiftNIO's file, line and location fields are removed")
    func locationFields() {
        #expect(MessageSanitizer.clean(
            "HTTP/2: ExcessiveContinuationFrames(file: \"NIOHTTP2/HTTP2ChannelHandler.swift\", line: 686)")
            == "HTTP/2: ExcessiveContinuationFrames")
        #expect(MessageSanitizer.clean(
            "InvalidFlowControlWindowSize(delta: 1, currentWindowSize: 5, location: NIOHTTP2/HTTP2FlowControlWindow.swift:98)")
            == "InvalidFlowControlWindowSize(delta: 1, currentWindowSize: 5)")
        #expect(MessageSanitizer.clean("StreamClosed(streamID: 1, errorCode: CANCEL, location: )") == "StreamClosed(streamID: 1, errorCode: CANCEL)")
        #expect(MessageSanitizer.clean("a file: nothing, line 3") == "a file: nothing, line 3")
    }

    @Test("source locations are removed; URLs that look like them are not")
    func sourceLocations() {
        #expect(MessageSanitizer.withoutSourceLocations(
            "not DER (ASN1Error.truncatedASN1Field:  SwiftASN1/ASN1.swift:202)") == "not DER (ASN1Error.truncatedASN1Field)")
        #expect(MessageSanitizer.withoutSourceLocations("X at /work/.build/checkouts/a/tls_record.cc:127]") == "X]")
        #expect(MessageSanitizer.withoutSourceLocations("for http://example.cc:8080/a.c:1 and x.cc") == "for http://example.cc:8080/a.c:1 and x.cc")
    }

    @Test("BoringSSL stacks become their reasons in words; other TLS text is cleaned")
    func tlsReasons() {
        let stack = "sslError([Error: 268436496 error:10000410:SSL routines:OPENSSL_internal:SSLV3_ALERT_HANDSHAKE_FAILURE at "
            + "/work/main/.build/checkouts/swift-nio-ssl/Sources/CNIOBoringSSL/ssl/tls_record.cc:491, Error: 268435610 "
            + "error:1000009a:SSL routines:OPENSSL_internal:HANDSHAKE_FAILURE_ON_CLIENT_HELLO at /x/handshake.cc:591])"
        #expect(MessageSanitizer.tlsReason(stack) == "sslv3 alert handshake failure; handshake failure on client hello")
        #expect(MessageSanitizer.tlsReason("handshake timed out") == "handshake timed out")
    }

    @Test("control characters are shown as escapes")
    func controlCharacters() {
        #expect(MessageSanitizer.escapingControlCharacters("a\r\nb\tc\u{1B}[2J\u{7F}é") == #"a\r\nb\tc\u{1B}[2J\u{7F}é"#)
        #expect(MessageSanitizer.escapingControlCharacters("a\tb\u{9B}2J\u{85}", keepingTabs: true) == "a\tb" + #"\u{9B}2J\u{85}"#)
    }
}
