@testable import Courier
import Crypto
import Foundation
import Testing

/// ``HexEncoding``: the one lowercase hex encoder behind every digest Courier writes (cache
/// file names and secondary keys, image key suffixes, Digest authentication).
@Suite("Hex encoding")
struct HexEncodingTests {
    @Test func knownBytes() {
        #expect(HexEncoding.lowercase([]) == "")
        #expect(HexEncoding.lowercase([0x00]) == "00")
        #expect(HexEncoding.lowercase([0x0f]) == "0f")
        #expect(HexEncoding.lowercase([0xff]) == "ff")
        #expect(HexEncoding.lowercase([0x00, 0x0f, 0xf0, 0xff, 0x10, 0x9a, 0xa9]) == "000ff0ff109aa9")
        #expect(HexEncoding.lowercase(Array(0...255)).count == 512)
        let all = HexEncoding.lowercase(Array(0...255))
        for byte in 0...255 {
            let start = all.index(all.startIndex, offsetBy: byte * 2)
            let pair = String(all[start..<all.index(start, offsetBy: 2)])
            #expect(UInt8(pair, radix: 16) == UInt8(byte) && pair == pair.lowercased(), "\(byte)")
        }
    }

    /// A full SHA-256 and MD5, as `Digest.hex` writes them (what the cache's file names and the
    /// Digest `response` are made of).
    @Test func fullDigests() {
        #expect(SHA256.hash(data: Data()).hex == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(SHA256.hash(data: Data("en, fr".utf8)).hex == "1692d4288843683ae24cdcb23a05c0723bcbaf403b1eec3211cf8ce1b6618445")
        #expect(Insecure.MD5.hash(data: Data("abc".utf8)).hex == "900150983cd24fb0d6963f7d28e17f72")
    }

    /// The Digest nonce count: eight lowercase hex digits.
    @Test func nonceCount() {
        #expect(AuthenticationHeader.hex8(1) == "00000001")
        #expect(AuthenticationHeader.hex8(0xABCDEF) == "00abcdef")
        #expect(AuthenticationHeader.hex8(.max) == "ffffffff")
    }
}
