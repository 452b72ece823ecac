import CourierTestServer
import Foundation
import Testing

/// Two `courier -d -o FILE` at once wrote the same `FILE.part`, each truncating what the other
/// had written, and each renamed it into place. The file a download writes is locked for the
/// run: the second is refused before anything is sent.
@Suite("courier download lock")
struct DownloadLockCLITests {
    @Test("a second download to the same -o FILE while the first runs is refused; the first completes intact")
    func aSecondDownloadToTheSameFileIsRefused() async throws {
        try await TestServer.withRunning { server in
            let directory = try CourierProcess.temporaryDirectory()
            let file = directory.appendingPathComponent("dripped.txt")
            let part = directory.appendingPathComponent("dripped.txt.part")
            let url = server.baseURL.absoluteString + "/drip?duration=3&numbytes=30"
            async let first = CourierProcess.run(["-d", "-o", file.path, url])
            // The first run has its FILE.part (hang bound: 60 s).
            for _ in 0..<3_000 where !FileManager.default.fileExists(atPath: part.path) {
                try await Task.sleep(for: .milliseconds(20))
            }
            #expect(FileManager.default.fileExists(atPath: part.path))
            let second = try await CourierProcess.run(["-d", "-o", file.path, url])
            #expect(second.status == 2, "\(second)")
            #expect(second.errors.contains("another courier is writing \(part.path)"), "\(second)")
            let done = try await first
            #expect(done.status == 0, "\(done)")
            #expect(try Data(contentsOf: file) == Data(repeating: UInt8(ascii: "*"), count: 30), "\(done)")
            #expect(DownloadCLITests.contents(directory) == ["dripped.txt"], "\(done)")
        }
    }
}
