import CourierTestServer
import Foundation
import Testing

/// `courier --cache DIR`: a disk cache shared by separate runs; `--verbose` says when the
/// answer came from it.
@Suite("courier --cache")
struct CacheCLITests {
    @Test func aSecondRunIsServedFromTheDiskCache() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-cli-cache-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        try await TestServer.withRunning { server in
            let url = server.baseURL.absoluteString + "/cached/cli?cc=max-age=600"
            let first = try await CourierProcess.run(["--cache", directory.path, "--verbose", url])
            #expect(first.status == 0, "\(first)")
            #expect(!first.output.contains("cache    hit"), "\(first)")
            let second = try await CourierProcess.run(["--cache", directory.path, "--verbose", url])
            #expect(second.status == 0, "\(second)")
            #expect(second.output.contains("cache    hit: served from the local cache, nothing sent"), "\(second)")
            #expect(server.requestsReceived(forPath: "/cached/cli") == 1)
            // Without --cache nothing is stored or used.
            let third = try await CourierProcess.run(["--verbose", url])
            #expect(!third.output.contains("cache    hit"), "\(third)")
            #expect(server.requestsReceived(forPath: "/cached/cli") == 2)
        }
    }

    @Test func anUnusableFolderIsAUsageError() async throws {
        let run = try await CourierProcess.run(["--cache", "/proc/courier-cannot-create-this", "http://127.0.0.1:9/"])
        #expect(run.status == 2, "\(run)")
        #expect(run.errors.contains("--cache"), "\(run)")
    }
}
