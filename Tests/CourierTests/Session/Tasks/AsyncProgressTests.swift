@testable import Courier
import CourierTestServer
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// Progress as async sequences from `transfer(...)` handles: rising, ending at the final
/// count (also when read after the transfer ended, and without a `Content-Length`).
@Suite("async progress")
struct AsyncProgressTests {
    @Test("transfer(_:): download progress of a GET ends at the Content-Length; the body decodes")
    func dataTransferProgress() async throws {
        struct Bytes: Decodable, Sendable {}
        try await TestServer.withRunning { server in
            let manager = HTTPSessionManager(baseURL: server.baseURL)
            let transfer = try manager.transfer("range/100000", parameters: ["duration": 1, "chunk_size": 10_000])
            let progress = AsyncUploadTests.collect(transfer.downloadProgress)
            let response = try await transfer.response
            #expect(response.value == DownloadResumeTests.rangeBytes(100_000))
            let seen = await progress.value
            AsyncUploadTests.expectRisingToTotal(seen, total: 100_000)
            #expect(seen.count > 2, "only \(seen.count) progress values over a one-second body")
            #expect(transfer.task.snapshot.withLock { $0.responsesBuilt } == 0)
        }
    }

    @Test("a chunked body without Content-Length: the total is -1 and the last value is the byte count")
    func unknownTotal() async throws {
        try await TestServer.withRunning { server in
            let manager = HTTPSessionManager(baseURL: server.baseURL)
            let transfer = try manager.transfer("stream-bytes/50000", parameters: ["chunk_size": 1000, "seed": 1])
            let progress = AsyncUploadTests.collect(transfer.downloadProgress)
            let body = try await transfer.value
            #expect(body.count == 50_000)
            let seen = await progress.value
            #expect(seen.last?.completedUnitCount == 50_000)
            #expect(seen.last?.totalUnitCount == -1)
        }
    }

    @Test("progress read only after the transfer ended still gives the final value, then ends")
    func readAfterTheEnd() async throws {
        try await TestServer.withRunning { server in
            let manager = HTTPSessionManager(baseURL: server.baseURL)
            let upload = try manager.upload(Data(count: 200_000), to: "upload")
            _ = try await upload.response
            var uploads: [TransferProgress] = []
            for await value in upload.uploadProgress { uploads.append(value) }
            #expect(uploads.last == TransferProgress(direction: .upload, completedUnitCount: 200_000, totalUnitCount: 200_000))
            var downloads: [TransferProgress] = []
            for await value in upload.downloadProgress { downloads.append(value) }
            #expect(downloads.last?.completedUnitCount == upload.task.countOfBytesReceived)
            #expect((downloads.last?.completedUnitCount ?? 0) > 0)
        }
    }
}
