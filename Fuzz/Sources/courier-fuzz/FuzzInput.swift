/// Reads structured values out of a fuzzer's bytes; runs out gracefully (zeros, empty strings).
struct FuzzInput {
    private let bytes: [UInt8]
    private var index = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    var isAtEnd: Bool { index >= bytes.count }

    mutating func byte() -> UInt8 {
        guard index < bytes.count else { return 0 }
        defer { index += 1 }
        return bytes[index]
    }

    /// A string of up to `maxLength` bytes, decoded as UTF-8 with repairs.
    mutating func string(maxLength: Int = 32) -> String {
        let length = min(Int(byte()) % (maxLength + 1), bytes.count - min(index, bytes.count))
        let slice = bytes[index..<(index + length)]
        index += length
        return String(decoding: slice, as: UTF8.self)
    }

    /// What is left, as bytes.
    mutating func rest() -> [UInt8] {
        defer { index = bytes.count }
        return index < bytes.count ? Array(bytes[index...]) : []
    }
}
