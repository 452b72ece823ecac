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
            let file = directory.appendingPathComponent("slow.bin")
            let part = directory.appendingPathComponent("slow.bin.part")
            let size = 100_000
            let url = server.baseURL.absoluteString + "/range/\(size)"
            // 20 s of transfer: the first is still writing while the second runs.
            let first = try CourierChild(["-d", "-o", file.path, url + "?duration=20&chunk_size=1000"])
            let partSize: () -> Int = {
                ((try? FileManager.default.attributesOfItem(atPath: part.path)[.size]) as? NSNumber)?.intValue ?? 0
            }
            // The first has written bytes (hang bound: 60 s).
            let clock = ContinuousClock()
            let end = clock.now + .seconds(60)
            while partSize() == 0 && clock.now < end { try await Task.sleep(for: .milliseconds(20)) }
            #expect(partSize() > 0)
            let second = try await CourierProcess.run(["-d", "-o", file.path, url])
            #expect(second.status == 2, "\(second)")
            #expect(second.errors.contains("another courier is writing \(part.path)"), "\(second)")
            let ended = await first.waitForExit(bound: 120)
            #expect(ended.status == 0, "\(first.errorOutput)")
            #expect(try Data(contentsOf: file) == DownloadCLITests.alphabet(size), "\(first.errorOutput)")
            #expect(DownloadCLITests.contents(directory) == ["slow.bin"])
        }
    }
}
