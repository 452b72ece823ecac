#if os(Linux)  // tmpfs and mount(8)
import Courier
import CourierTestServer
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// A download whose file can't take its bytes (a full disk) fails with the file's error, as
/// soon as a write fails: never a success with a short file or no file.
@Suite(.serialized) struct DownloadWriteFailureTests {
    /// A 64 KiB tmpfs mounted on a new folder for the test's duration. Root only (these
    /// machines and CI run as root); elsewhere the mount fails and the test says why.
    struct SmallDisk {
        let folder: URL

        static func mount() throws -> SmallDisk {
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("courier-small-disk-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: false)
            let result = try ProcessLauncher.runToEnd("/bin/mount", ["-t", "tmpfs", "-o", "size=64k", "tmpfs", folder.path], includingStandardError: true)
            guard result.status == 0 else {
                try? FileManager.default.removeItem(at: folder)
                throw Unavailable(description: "mount -t tmpfs needs root: \(String(decoding: result.output, as: UTF8.self))")
            }
            return SmallDisk(folder: folder)
        }

        func unmount() {
            _ = try? ProcessLauncher.runToEnd("/bin/umount", [folder.path], includingStandardError: true)
            try? FileManager.default.removeItem(at: folder)
        }
    }

    struct Unavailable: Error, CustomStringConvertible {
        var description: String
    }

    @Test("a full disk fails the download with cannotWriteDownloadFile, naming the file and the reason")
    func aFullDiskFailsTheDownload() async throws {
        let disk = try SmallDisk.mount()
        defer { disk.unmount() }
        try await TestServer.withRunning { server in
            // The partial file lives on the small disk: the resumed download writes there.
            let file = disk.folder.appendingPathComponent("partial")
            try Data(repeating: UInt8(ascii: "a"), count: 1_000).write(to: file)
            var resumeData = DownloadResumeData(request: URLRequest(url: server.sessionURL("/download/100000000")), partialFileURL: file)
            resumeData.allowsResumeWithoutValidator = true
            let recorder = CompletionRecorder()
            let task = URLSessionManager().downloadTask(withResumeData: resumeData, destination: { _, _ in file }) {
                response, url, error in recorder.handler(response, url, error)
            }
            task.resume()
            await recorder.wait()
            let call = try #require(recorder.first)
            #expect(call.object == nil)
            guard case .cannotWriteDownloadFile(let path, let reason)? = call.error as? CourierError else {
                Issue.record("expected cannotWriteDownloadFile, got \(String(describing: call.error))")
                return
            }
            #expect(path == file.path)
            #expect(reason.contains("No space left on device"))
            // Stopped at the first failed write, long before the 100 MB were read (a 200: the file starts over).
            #expect(task.countOfBytesReceived < 100_000_000)
        }
    }
}
#endif
