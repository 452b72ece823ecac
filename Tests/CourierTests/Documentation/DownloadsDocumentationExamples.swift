import Courier
import CourierTestServer
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// The examples of the "Downloads and Resume" article, run against the in-process test server.
@Suite("Documentation: Downloads and Resume")
struct DownloadsDocumentationExamples {
    @Test("a download task with a destination, cancelled with resume data, then resumed")
    func blockShapeResume() async throws {
        try await TestServer.withRunning { server in
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("docs-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: folder) }
            let manager = URLSessionManager()

            // Streamed to a temporary file, then moved to where `destination` says.
            let url = server.baseURL.appending(path: "range/102400").appending(queryItems: [
                URLQueryItem(name: "duration", value: "5"), URLQueryItem(name: "chunk_size", value: "1024"),
            ])
            let download = manager.downloadTask(with: URLRequest(url: url), destination: { temporaryURL, response in
                folder.appendingPathComponent(response.suggestedFilename ?? "download.bin")
            }, completionHandler: { response, fileURL, error in
                print(response?.statusCode ?? 0, fileURL?.path ?? "-", error.map { "\($0)" } ?? "no error")
            })
            download.resume()
            for await progress in download.progressUpdates(.download) where progress.completedUnitCount > 10_000 { break }

            // Stop part-way: the bytes so far stay on disk, described by the resume data.
            download.cancel(byProducingResumeData: { resumeData in
                guard let resumeData else { return }     // nil: the server can't resume (no validator, no ranges)
                let encoded = try? resumeData.encoded()   // store it; DownloadResumeData(encoded:) reads it back
                print(resumeData.offset, encoded?.count ?? 0)
                manager.downloadTask(withResumeData: resumeData, destination: { _, _ in folder.appendingPathComponent("range.bin") },
                                     completionHandler: { response, fileURL, error in
                    print(response?.statusCode ?? 0)     // 206: only the rest was sent (Range, If-Range)
                }).resume()
            })

            let file = folder.appendingPathComponent("range.bin")   // there once the resumed task has moved it
            try await eventually(within: 90) { FileManager.default.fileExists(atPath: file.path) }
            #expect(try Data(contentsOf: file).count == 102_400)
            #expect(try Data(contentsOf: file) == Data((0..<102_400).map { UInt8(ascii: "a") + UInt8($0 % 26) }))
        }
    }

    @Test("awaited downloads and resume")
    func awaitedResume() async throws {
        try await TestServer.withRunning { server in
            let manager = HTTPSessionManager(baseURL: server.baseURL)
            let target = FileManager.default.temporaryDirectory.appendingPathComponent("docs-range-\(UUID().uuidString).bin")
            defer { try? FileManager.default.removeItem(at: target) }

            let download = try manager.download("range/102400?duration=2&chunk_size=1024", to: target)
            for await step in download.downloadProgress where step.completedUnitCount > 10_000 { break }
            if let resumeData = await download.cancelProducingResumeData() {   // keeps the bytes so far
                let done = try await manager.download(resumingWith: resumeData, to: target).response
                print(done.status, done.value.lastPathComponent)               // 206 Partial Content docs-range-….bin
            }

            #expect(try Data(contentsOf: target) == Data((0..<102_400).map { UInt8(ascii: "a") + UInt8($0 % 26) }))
        }
    }
}
