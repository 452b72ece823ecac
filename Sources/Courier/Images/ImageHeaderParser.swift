/// Reads format and pixel size from the first bytes of PNG, JPEG, GIF, WebP, BMP, ICO and TIFF
/// files. Every read is bounds-checked: truncated or hostile input gives nil, never a crash.
enum ImageHeaderParser {
    struct Header: Equatable {
        var format: Image.Format
        var width: Int
        var height: Int
    }

    /// JPEG and TIFF may need more than a fixed prefix (EXIF before SOF, IFD far away): give
    /// them the whole file, the others 64 bytes.
    static func maximumHeaderBytes(_ data: some Collection<UInt8>) -> Int {
        let first = Array(data.prefix(4))
        if first.starts(with: [0xFF, 0xD8]) || first == [0x49, 0x49, 0x2A, 0x00] || first == [0x4D, 0x4D, 0x00, 0x2A] {
            return data.count
        }
        return 64
    }

    static func parse(_ bytes: [UInt8]) -> Header? {
        let reader = ByteReader(bytes: bytes)
        if bytes.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return png(reader) }
        if bytes.starts(with: [0xFF, 0xD8]) { return jpeg(reader) }
        if bytes.starts(with: Array("GIF87a".utf8)) || bytes.starts(with: Array("GIF89a".utf8)) { return gif(reader) }
        if bytes.starts(with: Array("RIFF".utf8)), reader.ascii(8, 4) == "WEBP" { return webp(reader) }
        if bytes.starts(with: Array("BM".utf8)) { return bmp(reader) }
        if bytes.starts(with: [0x00, 0x00, 0x01, 0x00]) { return ico(reader) }
        if bytes.starts(with: [0x49, 0x49, 0x2A, 0x00]) { return tiff(reader, littleEndian: true) }
        if bytes.starts(with: [0x4D, 0x4D, 0x00, 0x2A]) { return tiff(reader, littleEndian: false) }
        return nil
    }

    static func valid(_ format: Image.Format, _ width: Int?, _ height: Int?) -> Header? {
        guard let width, let height, width > 0, height > 0 else { return nil }
        return Header(format: format, width: width, height: height)
    }

    static func png(_ reader: ByteReader) -> Header? {
        guard reader.ascii(12, 4) == "IHDR" else { return nil }
        return valid(.png, reader.u32be(16).map(Int.init), reader.u32be(20).map(Int.init))
    }

    static func gif(_ reader: ByteReader) -> Header? {
        valid(.gif, reader.u16le(6).map(Int.init), reader.u16le(8).map(Int.init))
    }

    static func jpeg(_ reader: ByteReader) -> Header? {
        var offset = 2
        while offset < reader.count {
            guard reader.byte(offset) == 0xFF else { return nil }
            var marker = reader.byte(offset + 1)
            while marker == 0xFF {
                offset += 1
                marker = reader.byte(offset + 1)
            }
            guard let code = marker else { return nil }
            offset += 2
            if code == 0x01 || (0xD0...0xD8).contains(code) { continue }
            if code == 0xD9 || code == 0xDA { return nil }
            guard let length = reader.u16be(offset), length >= 2 else { return nil }
            if (0xC0...0xCF).contains(code), code != 0xC4, code != 0xC8, code != 0xCC {
                return valid(.jpeg, reader.u16be(offset + 5).map(Int.init), reader.u16be(offset + 3).map(Int.init))
            }
            offset += Int(length)
        }
        return nil
    }

    static func webp(_ reader: ByteReader) -> Header? {
        switch reader.ascii(12, 4) {
        case "VP8 ":
            guard reader.byte(23) == 0x9D, reader.byte(24) == 0x01, reader.byte(25) == 0x2A else { return nil }
            return valid(.webp, reader.u16le(26).map { Int($0 & 0x3FFF) }, reader.u16le(28).map { Int($0 & 0x3FFF) })
        case "VP8L":
            guard reader.byte(20) == 0x2F, let bits = reader.u32le(21) else { return nil }
            return valid(.webp, Int(bits & 0x3FFF) + 1, Int((bits >> 14) & 0x3FFF) + 1)
        case "VP8X":
            return valid(.webp, reader.u24le(24).map { Int($0) + 1 }, reader.u24le(27).map { Int($0) + 1 })
        default:
            return nil
        }
    }

    static func bmp(_ reader: ByteReader) -> Header? {
        guard let headerSize = reader.u32le(14) else { return nil }
        if headerSize == 12 {
            return valid(.bmp, reader.u16le(18).map(Int.init), reader.u16le(20).map(Int.init))
        }
        let width = reader.u32le(18).map { Int(Int32(bitPattern: $0)) }
        let height = reader.u32le(22).map { abs(Int(Int32(bitPattern: $0))) }
        return valid(.bmp, width, height)
    }

    static func ico(_ reader: ByteReader) -> Header? {
        guard let count = reader.u16le(4), count > 0 else { return nil }
        var best: (width: Int, height: Int)?
        for index in 0..<Int(count) {
            let entry = 6 + index * 16
            guard let rawWidth = reader.byte(entry), let rawHeight = reader.byte(entry + 1) else { break }
            let size = (width: rawWidth == 0 ? 256 : Int(rawWidth), height: rawHeight == 0 ? 256 : Int(rawHeight))
            if best.map({ size.width * size.height > $0.width * $0.height }) ?? true { best = size }
        }
        return valid(.ico, best?.width, best?.height)
    }

    static func tiff(_ reader: ByteReader, littleEndian: Bool) -> Header? {
        func u16(_ offset: Int) -> UInt16? { littleEndian ? reader.u16le(offset) : reader.u16be(offset) }
        func u32(_ offset: Int) -> UInt32? { littleEndian ? reader.u32le(offset) : reader.u32be(offset) }
        guard let ifd = u32(4).map(Int.init), let count = u16(ifd) else { return nil }
        var width: Int?
        var height: Int?
        for index in 0..<Int(count) {
            let entry = ifd + 2 + index * 12
            guard let tag = u16(entry), let type = u16(entry + 2) else { return nil }
            guard tag == 256 || tag == 257 else { continue }
            let value: Int?
            switch type {
            case 3: value = u16(entry + 8).map(Int.init)
            case 4: value = u32(entry + 8).map(Int.init)
            default: value = nil
            }
            if tag == 256 { width = value } else { height = value }
        }
        return valid(.tiff, width, height)
    }
}

/// Bounds-checked little- and big-endian reads.
struct ByteReader {
    let bytes: [UInt8]

    var count: Int { bytes.count }

    func byte(_ offset: Int) -> UInt8? { offset >= 0 && offset < bytes.count ? bytes[offset] : nil }

    func ascii(_ offset: Int, _ length: Int) -> String? {
        guard offset >= 0, offset + length <= bytes.count else { return nil }
        return String(decoding: bytes[offset..<offset + length], as: UTF8.self)
    }

    private func unsigned(_ offset: Int, _ length: Int, bigEndian: Bool) -> UInt32? {
        guard offset >= 0, offset + length <= bytes.count else { return nil }
        var value: UInt32 = 0
        for index in 0..<length {
            let byte = UInt32(bytes[offset + (bigEndian ? index : length - 1 - index)])
            value = value << 8 | byte
        }
        return value
    }

    func u16le(_ offset: Int) -> UInt16? { unsigned(offset, 2, bigEndian: false).map { UInt16($0) } }
    func u16be(_ offset: Int) -> UInt16? { unsigned(offset, 2, bigEndian: true).map { UInt16($0) } }
    func u24le(_ offset: Int) -> UInt32? { unsigned(offset, 3, bigEndian: false) }
    func u32le(_ offset: Int) -> UInt32? { unsigned(offset, 4, bigEndian: false) }
    func u32be(_ offset: Int) -> UInt32? { unsigned(offset, 4, bigEndian: true) }
}
