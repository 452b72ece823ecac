import Foundation
import Testing

@testable import courier

/// Every error message courier prints goes through ``MessageSanitizer/clean(_:)``, and some hold
/// what a server chose (the Location of the last redirect, a TLS reason). Its regular
/// expressions were tried from every position: 60,000 letters in a Location took courier 55 s
/// after a redirect limit, a run of spaces more. These check the linear scans against the
/// expressions they replace, and that long runs end (the limit is a hang bound).
@Suite("MessageSanitizer scaling")
struct MessageSanitizerScalingTests {
    /// The expressions the scans replace, as they were.
    static func referencePasswords(_ text: String) -> String {
        // The user runs to its first ':' and may hold '@'; the password to the authority's last '@'.
        let pattern = #/(?<prefix>[A-Za-z][A-Za-z0-9+.\-]*://[^\s/?#:]*):[^\s/?#]*@/#
        return text.replacing(pattern) { match in match.output.prefix + "@" }
    }

    static func referenceLocations(_ text: String) -> String {
        let location = #/(?:\s+at)?\s+[^\s:]*/[^\s:/]*\.(?:swift|cc|c|cpp|h):\d+/#
        return text.replacing(location, with: "")
    }

    @Test("the scans answer as the expressions did, on 20,000 seeded random texts of the characters that matter")
    func scansMatchTheExpressions() {
        let alphabet = Array("ahtp:/@ .swifch1?#\nx9+-a t/:@")
        let pieces = alphabet.map { String($0) } + ["swift", ".cc", "at", "://", ":1", "u:p@h", " at /a/b.swift:12", "http://", "é", ".h:7", "x:y@", "https://u:", ":pw@"]
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next(_ bound: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((state >> 33) % UInt64(bound))
        }
        var changed = (passwords: 0, locations: 0)
        for _ in 0..<20_000 {
            let text = (0..<next(16)).map { _ in pieces[next(pieces.count)] }.joined()
            if Self.referencePasswords(text) != text { changed.passwords += 1 }
            if Self.referenceLocations(text) != text { changed.locations += 1 }
            #expect(MessageSanitizer.withoutPasswords(text) == Self.referencePasswords(text), "\(text.debugDescription)")
            #expect(MessageSanitizer.withoutSourceLocations(text) == Self.referenceLocations(text), "\(text.debugDescription)")
        }
        // The texts exercise both: many hold a password or a location to remove.
        #expect(changed.passwords > 500 && changed.locations > 500, "\(changed)")
    }

    @Test(.timeLimit(.minutes(1)))
    func longRunsAreScannedOnce() {
        let letters = "too many redirects; the last one pointed to http://h/" + String(repeating: "a", count: 100_000)
        #expect(MessageSanitizer.clean(letters) == letters)
        let spaces = "x" + String(repeating: " ", count: 30_000) + "y"
        #expect(MessageSanitizer.clean(spaces) == spaces)
        let passwords = String(repeating: "http://u:p@h/ ", count: 20_000)
        #expect(MessageSanitizer.clean(passwords) == String(repeating: "http://u@h/ ", count: 20_000))
    }
}
