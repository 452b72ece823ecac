import Foundation
import Testing

@testable import courier

/// ``PartialFileLock`` with plain files: what its release removes.
@Suite("courier partial file lock")
struct PartialFileLockTests {
    @Test("release removes the empty file it created, and never a file put in its place since")
    func releaseRemovesOnlyTheFileItCreated() throws {
        let directory = try CourierProcess.temporaryDirectory()
        let part = directory.appendingPathComponent("x.part")
        let lock = try #require(try PartialFileLock.acquire(part))
        lock.release()
        #expect(!FileManager.default.fileExists(atPath: part.path), "the empty file it created is removed")

        // A failed download removes its empty FILE.part; another courier then creates and locks
        // a new one, still empty while it connects. The first one's release must leave it.
        let first = try #require(try PartialFileLock.acquire(part))
        try FileManager.default.removeItem(at: part)
        let second = try #require(try PartialFileLock.acquire(part))
        first.release()
        #expect(FileManager.default.fileExists(atPath: part.path), "another courier's locked file was removed")
        second.release()
        #expect(!FileManager.default.fileExists(atPath: part.path))
    }
}
