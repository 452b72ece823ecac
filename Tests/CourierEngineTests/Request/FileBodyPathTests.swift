#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CourierEngine
import CourierTestServer
import Foundation
import NIOCore
import Testing

/// A file body's path is checked for what it names before it is opened. Opening is not free of
/// effects: a FIFO's writer blocked in `open` is released by a reader's open (and then sees its
/// reader go away), and some devices act when opened (a tape rewinds, a terminal may become the
/// process's controlling one). So a path that names anything but a regular file is refused
/// with ``EngineError/invalidBody(_:)`` and never opened. The probe (inotify) sees every open of
/// the path; a regular file's upload shows that it does.
@Suite("a file body's path")
struct FileBodyPathTests {
    @Test func aFIFOIsRefusedWithoutBeingOpened() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-fifo-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let fifo = directory.appendingPathComponent("fifo").path
        let regular = directory.appendingPathComponent("regular.bin").path
        #expect(mkfifo(fifo, 0o600) == 0)
        #expect(FileManager.default.createFile(atPath: regular, contents: Data(repeating: 0x42, count: 1024)))
        let fifoProbe = try #require(PathOpenProbe(path: fifo))
        let regularProbe = try #require(PathOpenProbe(path: regular))
        try await withEngine { engine, server in
            let sent = EventRecorder()
            engine.execute(EngineRequest(method: "PUT", url: server.url("/upload"), body: .file(path: regular))) { sent.record($0) }
            await sent.waitForEnd()
            #expect(sent.failure == nil)
            #expect(regularProbe.wasOpened(), "the probe missed the regular file's open")

            let refused = EventRecorder()
            engine.execute(EngineRequest(method: "PUT", url: server.url("/upload"), body: .file(path: fifo))) { refused.record($0) }
            await refused.waitForEnd()
            guard case .invalidBody(let reason)? = refused.failure else {
                Issue.record("ended with \(String(describing: refused.failure)), not invalidBody")
                return
            }
            #expect(reason.contains("not a regular file"), "\(reason)")
            #expect(!fifoProbe.wasOpened(), "the FIFO was opened to learn that it is one")
            #expect(server.requestsReceived(forPath: "/upload") == 1)
        }
    }

    /// A file body named by a symbolic link sends the whole file it points to. Its length is
    /// the file's, measured through the link: the link's own size (its target's path, a few
    /// dozen bytes) as Content-Length would send that many bytes of the file and call the
    /// upload done.
    @Test func aSymbolicLinkSendsTheWholeFile() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-link-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let target = directory.appendingPathComponent("target.bin").path
        let link = directory.appendingPathComponent("link.bin").path
        let chunk = ByteBuffer(repeating: 0x5A, count: 64 << 10)
        #expect(FileManager.default.createFile(atPath: target, contents: Data(repeating: 0x5A, count: 4 * (64 << 10))))
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)
        #expect(RequestBody.file(path: link).expectedLength == Int64(4 * (64 << 10)))
        try await withEngine { engine, server in
            let recorder = EventRecorder()
            engine.execute(EngineRequest(method: "PUT", url: server.url("/upload"), body: .file(path: link))) { recorder.record($0) }
            await recorder.waitForEnd()
            #expect(recorder.failure == nil)
            let outcome = try UploadOutcome(recorder)
            #expect(outcome.bytes == 4 * (64 << 10))
            #expect(outcome.sha256 == UploadOutcome.sha256(of: chunk, times: 4))
        }
    }

    /// An offset past the file's end is the caller's mistake (a resumed upload's offset from
    /// another file, say): the request fails naming it, rather than sending an empty body
    /// that looks like success. An offset at the end sends an empty body (nothing is left).
    @Test func anOffsetPastTheEndIsRefused() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("courier-offset-\(UUID()).bin").path
        #expect(FileManager.default.createFile(atPath: path, contents: Data(repeating: 0x42, count: 1024)))
        defer { unlink(path) }
        try await withEngine { engine, server in
            let refused = EventRecorder()
            engine.execute(EngineRequest(method: "PUT", url: server.url("/upload"), body: .file(path: path, offset: 5000))) {
                refused.record($0)
            }
            await refused.waitForEnd()
            guard case .invalidBody(let reason)? = refused.failure else {
                Issue.record("ended with \(String(describing: refused.failure)), not invalidBody")
                return
            }
            #expect(reason.contains("5000") && reason.contains("1024"), "\(reason)")

            let empty = EventRecorder()
            engine.execute(EngineRequest(method: "PUT", url: server.url("/upload"), body: .file(path: path, offset: 1024))) {
                empty.record($0)
            }
            await empty.waitForEnd()
            #expect(empty.failure == nil)
            let emptyOutcome = try UploadOutcome(empty)
            #expect(emptyOutcome.bytes == 0)
            #expect(server.requestsReceived(forPath: "/upload") == 1)
        }
    }

    /// `RequestBody.expectedLength` is public and read before the engine checks a request (the
    /// session reads it for its progress totals): for a file body with no length it is the file's
    /// size minus the offset, and a hostile offset must not trap there (`size - Int64.min`
    /// overflows) nor report more than the file holds. Such a request then fails in the engine.
    /// A negative length is no length: the engine refuses the request, and until then the
    /// session must not show it as the body's size (`countOfBytesExpectedToSend`, progress totals).
    @Test func aNegativeLengthGivesNoExpectedLength() {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("courier-length-\(UUID()).bin").path
        #expect(FileManager.default.createFile(atPath: path, contents: Data(repeating: 0x42, count: 64)))
        defer { unlink(path) }
        #expect(RequestBody.file(path: path, length: -5).expectedLength == nil)
        #expect(RequestBody.file(path: path, length: Int64.min).expectedLength == nil)
        #expect(RequestBody.stream(length: -5) { _ in }.expectedLength == nil)
        #expect(RequestBody.file(path: path, length: 10).expectedLength == 10)
        #expect(RequestBody.stream(length: 0) { _ in }.expectedLength == 0)
    }

    @Test func aHostileOffsetGivesNoExpectedLengthAndNoTrap() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("courier-offset-\(UUID()).bin").path
        #expect(FileManager.default.createFile(atPath: path, contents: Data(repeating: 0x42, count: 1024)))
        defer { unlink(path) }
        #expect(RequestBody.file(path: path, offset: Int64.min).expectedLength == nil)
        #expect(RequestBody.file(path: path, offset: -1).expectedLength == nil)
        #expect(RequestBody.file(path: path, offset: Int64.max).expectedLength == 0)
        #expect(RequestBody.file(path: path, offset: 24).expectedLength == 1000)
        try await withEngine { engine, server in
            let refused = EventRecorder()
            engine.execute(EngineRequest(method: "PUT", url: server.url("/upload"), body: .file(path: path, offset: Int64.min))) {
                refused.record($0)
            }
            await refused.waitForEnd()
            guard case .invalidBody? = refused.failure else {
                Issue.record("ended with \(String(describing: refused.failure)), not invalidBody")
                return
            }
        }
    }
}
