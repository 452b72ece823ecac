import Foundation
import Testing

@testable import Courier

@Suite struct PercentEscapingTests {
    @Test func afnGoldenReservedCharacters() {
        #expect(percentEscaped(":#[]@!$&'()*+,;=?/") == "%3A%23%5B%5D%40%21%24%26%27%28%29%2A%2B%2C%3B%3D?/")
        #expect(percentEscaped(" :#[]@!$&'()*+,;=/?") == "%20%3A%23%5B%5D%40%21%24%26%27%28%29%2A%2B%2C%3B%3D/?")
    }

    @Test func percentIsEscapedAgain() {
        #expect(percentEscaped("%20%21") == "%2520%2521")
    }

    @Test func unreservedCharactersStay() {
        let unreserved = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~/?"
        #expect(percentEscaped(unreserved) == unreserved)
        #expect(percentEscaped("a b") == "a%20b")
        #expect(percentEscaped("\"<>\\^`{|}") == "%22%3C%3E%5C%5E%60%7B%7C%7D")
    }

    @Test func unicodeIsEscapedPerUTF8Byte() {
        #expect(percentEscaped("é") == "%C3%A9")
        #expect(percentEscaped("e\u{301}") == "e%CC%81")
        #expect(percentEscaped("東京") == "%E6%9D%B1%E4%BA%AC")
        #expect(percentEscaped("👨‍👩‍👧") == "%F0%9F%91%A8%E2%80%8D%F0%9F%91%A9%E2%80%8D%F0%9F%91%A7")
        #expect(percentEscaped("🇫🇷") == "%F0%9F%87%AB%F0%9F%87%B7")
    }

    /// AFN batches by 50 characters so a surrogate pair is never split (#3028): an emoji at
    /// every position around a batch edge must come out whole.
    @Test func emojiAcrossFiftyCharacterBatches() {
        for prefixLength in 45...55 {
            let input = String(repeating: "a", count: prefixLength) + "😀🇫🇷e\u{301}" + String(repeating: "b", count: 60)
            let escaped = percentEscaped(input)
            #expect(escaped.removingPercentEncoding == input)
            #expect(escaped.contains("%F0%9F%98%80%F0%9F%87%AB%F0%9F%87%B7e%CC%81"))
        }
    }

    /// Property: for thousands of random strings over all of Unicode, the output decodes back
    /// to the input and holds only allowed characters or `%XX` triplets.
    @Test func randomUnicodeRoundTrips() {
        var generator = SeededGenerator(seed: 0xC0FF_EE15_600D)
        let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~/?".utf8)
        let hex = Set("0123456789ABCDEF".utf8)
        for _ in 0..<5_000 {
            var scalars = String.UnicodeScalarView()
            for _ in 0..<Int.random(in: 0...40, using: &generator) {
                let pick = Int.random(in: 0..<4, using: &generator)
                let value: UInt32
                switch pick {
                case 0: value = UInt32.random(in: 0x20..<0x7F, using: &generator)
                case 1: value = UInt32.random(in: 0..<0x800, using: &generator)
                case 2: value = UInt32.random(in: 0x1F300..<0x1FAFF, using: &generator)
                default: value = UInt32.random(in: 0..<0x110000, using: &generator)
                }
                if let scalar = Unicode.Scalar(value) { scalars.append(scalar) }
            }
            let input = String(scalars)
            let escaped = percentEscaped(input)
            #expect(escaped.removingPercentEncoding == input)
            let bytes = Array(escaped.utf8)
            var index = 0
            var valid = true
            while index < bytes.count {
                if bytes[index] == UInt8(ascii: "%") {
                    valid = valid && index + 2 < bytes.count && hex.contains(bytes[index + 1]) && hex.contains(bytes[index + 2])
                    index += 3
                } else {
                    valid = valid && allowed.contains(bytes[index])
                    index += 1
                }
            }
            #expect(valid, "unexpected character in \(escaped)")
        }
    }
}
