#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CourierEngine
import CourierTestServer
import Foundation
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
}
