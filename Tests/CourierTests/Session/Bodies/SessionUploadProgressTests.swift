import Courier
import CourierEngine
import CourierTestServer
import Crypto
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NIOCore
import Synchronization
import Testing

/// What a user of the session sees of a large upload: the progress block runs in order, a
/// bounded number of times (not once per 64 KiB chunk), ends exactly at the total, and the
/// server got every byte (its `/upload` answers the count and SHA-256).
@Suite("Session upload progress")
struct SessionUploadProgressTests {
    private static let chunk = ByteBuffer(repeating: 0x51, count: 64 * 1024)
    private static let size: Int64 = 64 << 20

    private static var expectedHash: String {
        var hasher = SHA256()
        for _ in 0..<(size / Int64(chunk.readableBytes)) { hasher.update(data: Data(chunk.readableBytesView)) }
        return hasher.finalize().map { String(format: "%02x", $0) }.joined()
    }

    private enum Source: CaseIterable { case stream, file }

    @Test(arguments: [Source.stream, .file])
    private func progressOf64MiBUploadIsOrderedExactAndBounded(source: Source) async throws {
        var fileURL: URL?
        if source == .file {
            let url = FileManager.default.temporaryDirectory.appendingPathComponent("courier-session-upload-\(UUID()).bin")
            #expect(FileManager.default.createFile(atPath: url.path, contents: nil))
            let handle = try #require(FileHandle(forWritingAtPath: url.path))
            for _ in 0..<(Self.size / Int64(Self.chunk.readableBytes)) { handle.write(Data(Self.chunk.readableBytesView)) }
            try handle.close()
            fileURL = url
        }
        defer { if let fileURL { try? FileManager.default.removeItem(at: fileURL) } }
        try await TestServer.withRunning { server in
            var request = URLRequest(url: server.sessionURL("/upload"))
            request.httpMethod = "POST"
            let seen = Mutex<[(completed: Int64, total: Int64)]>([])
            let progress: @Sendable (Progress) -> Void = { progress in
                seen.withLock { $0.append((progress.completedUnitCount, progress.totalUnitCount)) }
            }
            let recorder = CompletionRecorder()
            let manager = URLSessionManager()
            let task: UploadTask
            switch source {
            case .stream:
                let chunks = Self.size / Int64(Self.chunk.readableBytes)
                let body = RequestBody.stream(length: Self.size) { writer in
                    for _ in 0..<chunks { try await writer.write(Self.chunk) }
                }
                task = manager.uploadTask(
                    withStreamedRequest: request, body: body, progress: progress, completionHandler: recorder.handler)
            case .file:
                task = manager.uploadTask(
                    with: request, fromFile: try #require(fileURL), progress: progress, completionHandler: recorder.handler)
            }
            let start = Date()
            task.resume()
            await recorder.wait()
            let elapsed = Date().timeIntervalSince(start)
            #expect(recorder.first?.error == nil)
            let answer = recorder.first?.object as? JSONValue
            #expect(answer?["bytes"] == .int(Self.size))
            #expect(answer?["sha256"] == .string(Self.expectedHash))
            let calls = seen.withLock { $0 }
            let completed = calls.map(\.completed)
            #expect(completed.last == Self.size)
            #expect(calls.allSatisfy { $0.total == Self.size })
            #expect(zip(completed, completed.dropFirst()).allSatisfy { $0 < $1 }, "progress goes strictly up")
            // One call per 1 % of the body, the first, and one per 100 ms: not one per chunk.
            #expect(calls.count <= 102 + Int(elapsed / 0.1), "\(calls.count) progress calls in \(elapsed) s")
            #expect(calls.count < 1024)
            #expect(task.countOfBytesSent == Self.size)
            manager.invalidateSessionCancelingTasks(true, resetSession: false)
        }
    }
}
