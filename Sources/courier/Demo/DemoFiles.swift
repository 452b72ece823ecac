import Crypto
import Foundation

/// The demo's file work: generating the upload, checking the download.
enum DemoFiles {
    private static let chunkSize = 1 << 20

    /// Writes `mebibytes` MiB of random bytes (from `/dev/urandom`) to `url` and returns
    /// their SHA-256 as hex.
    static func writeRandomFile(at url: URL, mebibytes: Int) throws -> String {
        guard let random = FileHandle(forReadingAtPath: "/dev/urandom") else {
            throw DemoFailure("cannot open /dev/urandom to generate the upload")
        }
        defer { try? random.close() }
        guard FileManager.default.createFile(atPath: url.path, contents: nil),
            let file = FileHandle(forWritingAtPath: url.path)
        else { throw DemoFailure("cannot create \(url.path)") }
        defer { try? file.close() }
        var hasher = SHA256()
        for _ in 0..<mebibytes {
            guard let chunk = try random.read(upToCount: chunkSize), chunk.count == chunkSize else {
                throw DemoFailure("/dev/urandom gave fewer bytes than asked")
            }
            hasher.update(data: chunk)
            try file.write(contentsOf: chunk)
        }
        return hex(hasher.finalize())
    }

    /// The size of the file at `url`.
    static func size(of url: URL) throws -> Int64 {
        let attributes = try FileManager.default.attributesOfItem(atPath: url.path)
        guard let size = attributes[.size] as? NSNumber else { throw DemoFailure("no size for \(url.path)") }
        return size.int64Value
    }

    /// Checks that the file holds the test server's `/download/{n}` bytes: byte `i` is
    /// `"a" + i % 26`. Compares whole chunks against a precomputed pattern (fast even in a
    /// debug build); throws naming the first chunk that differs.
    static func verifyAlphabetPattern(at url: URL, size: Int64) throws {
        guard let handle = FileHandle(forReadingAtPath: url.path) else { throw DemoFailure("cannot read \(url.path)") }
        defer { try? handle.close() }
        let alphabet = Array("abcdefghijklmnopqrstuvwxyz".utf8)
        let pattern = Data((0..<(chunkSize + 26)).map { alphabet[$0 % 26] })
        var offset: Int64 = 0
        while offset < size {
            let count = Int(min(Int64(chunkSize), size - offset))
            guard let chunk = try handle.read(upToCount: count), chunk.count == count else {
                throw DemoFailure("the file ends early, at byte \(offset)")
            }
            let shift = Int(offset % 26)
            guard chunk == pattern[shift..<(shift + count)] else {
                throw DemoFailure("the bytes at offset \(offset) are not the server's pattern")
            }
            offset += Int64(count)
        }
    }

    /// Lower-case hex of a digest.
    static func hex(_ digest: SHA256.Digest) -> String {
        digest.map { byte in
            let text = String(byte, radix: 16)
            return byte < 16 ? "0" + text : text
        }.joined()
    }
}
