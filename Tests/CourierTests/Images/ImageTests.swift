import Foundation
import Testing

@testable import Courier

@Suite struct ImageTests {
    static func le16(_ value: Int) -> [UInt8] { [UInt8(value & 0xFF), UInt8(value >> 8 & 0xFF)] }
    static func le32(_ value: Int) -> [UInt8] { le16(value & 0xFFFF) + le16(value >> 16 & 0xFFFF) }
    static func be16(_ value: Int) -> [UInt8] { [UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)] }
    static func be32(_ value: Int) -> [UInt8] { be16(value >> 16 & 0xFFFF) + be16(value & 0xFFFF) }

    static let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + be32(13) + Array("IHDR".utf8) + be32(640) + be32(480) + [8, 6, 0, 0, 0]
    static let gif: [UInt8] = Array("GIF89a".utf8) + le16(33) + le16(17) + [0, 0, 0]
    static let jpeg: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0] + be16(16) + Array("JFIF\0".utf8) + [1, 1, 0] + be16(1) + be16(1) + [0, 0]
        + [0xFF, 0xC2] + be16(17) + [8] + be16(300) + be16(200) + [3, 1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1]
    static let webpLossy: [UInt8] = Array("RIFF".utf8) + le32(30) + Array("WEBPVP8 ".utf8) + le32(18) + [0, 0, 0, 0x9D, 0x01, 0x2A] + le16(400) + le16(301)
    static let webpLossless: [UInt8] = Array("RIFF".utf8) + le32(30) + Array("WEBPVP8L".utf8) + le32(10) + [0x2F] + le32((99) | (49 << 14))
    static let webpExtended: [UInt8] = Array("RIFF".utf8) + le32(30) + Array("WEBPVP8X".utf8) + le32(10) + [0, 0, 0, 0] + [0xFF, 0x03, 0x00] + [0x0F, 0x00, 0x00]
    static let bmp: [UInt8] = Array("BM".utf8) + le32(0) + le32(0) + le32(54) + le32(40) + le32(12) + le32(-7 & 0xFFFF_FFFF)
    static let ico: [UInt8] = [0, 0, 1, 0] + le16(2) + [16, 16, 0, 0] + le16(1) + le16(32) + le32(0) + le32(0)
        + [0, 0, 0, 0] + le16(1) + le16(32) + le32(0) + le32(0)
    static let tiffLE: [UInt8] = Array("II".utf8) + le16(42) + le32(8) + le16(2)
        + le16(256) + le16(3) + le32(1) + le16(123) + le16(0) + le16(257) + le16(4) + le32(1) + le32(77) + le32(0)
    static let tiffBE: [UInt8] = Array("MM".utf8) + be16(42) + be32(8) + be16(2)
        + be16(256) + be16(4) + be32(1) + be32(5) + be16(257) + be16(3) + be32(1) + be16(6) + be16(0) + be32(0)

    @Test(arguments: [
        (png, Image.Format.png, 640, 480), (gif, .gif, 33, 17), (jpeg, .jpeg, 200, 300),
        (webpLossy, .webp, 400, 301), (webpLossless, .webp, 100, 50), (webpExtended, .webp, 1024, 16),
        (bmp, .bmp, 12, 7), (ico, .ico, 256, 256), (tiffLE, .tiff, 123, 77), (tiffBE, .tiff, 5, 6),
    ])
    func readsHeaders(bytes: [UInt8], format: Image.Format, width: Int, height: Int) throws {
        let image = try #require(Image(data: Data(bytes)))
        #expect(image.format == format)
        #expect(image.pixelWidth == width)
        #expect(image.pixelHeight == height)
    }

    @Test func scaleDividesPoints() throws {
        let image = try #require(Image(data: Data(Self.png), scale: 2))
        #expect(image.width == 320)
        #expect(image.height == 240)
    }

    @Test func truncatedAndUnknownInputGiveNil() {
        for bytes in [Self.png, Self.gif, Self.jpeg, Self.webpLossy, Self.bmp, Self.ico, Self.tiffLE] {
            for length in 0..<min(bytes.count, 30) {
                _ = Image(data: Data(bytes.prefix(length)))
            }
        }
        #expect(Image(data: Data(Self.png.prefix(20))) == nil)
        #expect(Image(data: Data("hello world".utf8)) == nil)
        #expect(Image(data: Data()) == nil)
    }

    @Test func hostileHeadersGiveNilOrTheirClaimNeverATrapOrALoop() throws {
        let soi: [UInt8] = [0xFF, 0xD8]
        let sof: [UInt8] = [0xFF, 0xC0] + Self.be16(17) + [8] + Self.be16(7) + Self.be16(5) + [3, 1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1]
        // JPEG: a segment length of 0 or 1 (would not advance), one running past the end, a run of
        // fill bytes to the end, an SOF of 0 × 0, an SOF cut before its size.
        for bytes in [soi + [0xFF, 0xE0] + Self.be16(0) + [0, 0], soi + [0xFF, 0xE0] + Self.be16(1) + [0, 0],
                      soi + [0xFF, 0xE1] + Self.be16(0xFFFF) + [UInt8](repeating: 0, count: 10),
                      soi + [UInt8](repeating: 0xFF, count: 100_000),
                      soi + [0xFF, 0xC0] + Self.be16(17) + [8, 0, 0, 0, 0], soi + [0xFF, 0xC0] + Self.be16(17) + [8, 0]] {
            #expect(Image(data: Data(bytes)) == nil)
        }
        // Ten thousand minimal segments before the SOF: walked, not refused.
        let tiny = soi + Array(repeating: [0xFF, 0xE1] + Self.be16(2), count: 10_000).flatMap { $0 } + sof
        #expect(Image(data: Data(tiny)).map { [$0.pixelWidth, $0.pixelHeight] } == [5, 7])
        // Zero and maximal dimensions in the other formats.
        #expect(Image(data: Data(Array("GIF89a".utf8) + Self.le16(0) + Self.le16(5) + [0, 0, 0])) == nil)
        let vp8x = Array("RIFF".utf8) + Self.le32(30) + Array("WEBPVP8X".utf8) + Self.le32(10) + [0, 0, 0, 0] + [UInt8](repeating: 0xFF, count: 6)
        #expect(Image(data: Data(vp8x)).map { [$0.pixelWidth, $0.pixelHeight, $0.pixelCount] } == [1 << 24, 1 << 24, 1 << 48])
        let bmpHeader = Array("BM".utf8) + Self.le32(0) + Self.le32(0) + Self.le32(54) + Self.le32(40)
        #expect(Image(data: Data(bmpHeader + Self.le32(12) + Self.le32(0x8000_0000))).map(\.pixelHeight) == 1 << 31)
        #expect(Image(data: Data(bmpHeader + Self.le32(0xFFFF_FFFF) + Self.le32(7))) == nil)
        // TIFF: an IFD offset far past the end; an IFD claiming 65,535 entries and holding one.
        #expect(Image(data: Data(Array("II".utf8) + Self.le16(42) + Self.le32(0xFFFF_FFFF))) == nil)
        #expect(Image(data: Data(Array("II".utf8) + Self.le16(42) + Self.le32(8) + Self.le16(0xFFFF) + Self.le16(256) + Self.le16(3) + Self.le32(1) + Self.le32(9))) == nil)
        // ICO claiming 65,535 entries and holding one: the one read is the size.
        #expect(Image(data: Data([0, 0, 1, 0] + Self.le16(0xFFFF) + [16, 32, 0, 0] + Self.le16(1) + Self.le16(32) + Self.le32(0) + Self.le32(0))).map { [$0.pixelWidth, $0.pixelHeight] } == [16, 32])
    }

    @Test func imageResponseSerializer() throws {
        let serializer = ImageResponseSerializer(imageScale: 2)
        let image = try #require(try serializer.responseObject(for: makeResponse(contentType: "image/png"), data: Data(Self.png)))
        #expect(image.scale == 2)
        #expect(try serializer.responseObject(for: makeResponse(contentType: "image/png"), data: Data()) == nil)
        #expect(throws: CourierError.self) {
            try serializer.responseObject(for: makeResponse(contentType: "image/png"), data: Data("nope".utf8))
        }
        #expect(throws: CourierError.self) {
            try serializer.responseObject(for: makeResponse(contentType: "text/plain"), data: Data(Self.png))
        }
        #expect(serializer.acceptableContentTypes?.contains("image/x-win-bitmap") == true)
    }
}
