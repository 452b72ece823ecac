import Courier
import CourierTestServer
import Crypto
import Foundation
import Testing

/// A 1 GiB multipart upload through `HTTPSessionManager`: a file part of generated
/// bytes (an async sequence with a declared length, so no disk is needed), streamed to the
/// test server's `/upload`, which hashes the body as it arrives without keeping it. The
/// server's SHA-256 must equal the one computed here from AFN's framing rules.
///
/// By default the file part is 128 MiB: the full suite runs every suite at once on 2 cores,
/// and a 1 GiB upload (12–20 s alone in a debug build, 50 s beside the others) starved the
/// timing-sensitive suites. `COURIER_LARGE_UPLOAD=1` runs the 1 GiB upload; the test prints
/// the process's peak RSS (VmHWM). Run it alone to read that number for the upload:
/// `COURIER_LARGE_UPLOAD=1 swift test --skip-build --filter LargeMultipartUpload`.
@Suite(.serialized) struct LargeMultipartUploadTests {
    static let fileBytes: Int64 =
        ProcessInfo.processInfo.environment["COURIER_LARGE_UPLOAD"] == "1" ? 1 << 30 : 128 << 20

    @Test func multipartUploadThroughSessionManagerIsHashedByTheServer() async throws {
        let fileBytes = Self.fileBytes
        let chunks = GeneratedChunks(totalBytes: fileBytes)

        try await TestServer.withRunning { server in
            let manager = HTTPSessionManager(baseURL: server.baseURL)
            let recorder = CompletionRecorder()
            let boundary = BoundaryBox()
            let baselineResident = Self.statusKiB("VmRSS")
            let start = ContinuousClock.now
            let task = manager.post(
                "upload", parameters: ["upload": "large"], headers: nil,
                constructingBody: { form in
                    boundary.value = form.boundary
                    form.appendPart(
                        chunks: chunks, name: "file", fileName: "generated.bin", length: fileBytes,
                        mimeType: "application/octet-stream")
                },
                progress: nil,
                success: { _, object in recorder.handler(nil, object, nil) },
                failure: { _, error in recorder.handler(nil, nil, error) })
            let uploadTask = try #require(task)
            // A generous bound (debug builds on a loaded 2-core machine): cancel rather than hang.
            let watchdog = Task {
                try await Task.sleep(for: .seconds(900))
                uploadTask.cancel()
            }
            await recorder.wait()
            watchdog.cancel()
            let elapsed = ContinuousClock.now - start

            let call = try #require(recorder.first)
            #expect(call.error == nil, "upload failed: \(String(describing: call.error))")
            let json = try #require(call.object as? JSONValue)

            let opening = "--\(boundary.value)\r\nContent-Disposition: form-data; name=\"upload\"\r\n\r\nlarge"
                + "\r\n--\(boundary.value)\r\nContent-Disposition: form-data; name=\"file\"; filename=\"generated.bin\"\r\n"
                + "Content-Type: application/octet-stream\r\n\r\n"
            let closing = "\r\n--\(boundary.value)--\r\n"
            // The whole body's hash (the server hashes all it receives), computed here from AFN's
            // framing rules and the generated file bytes, independently of MultipartFormData.
            var bodyHasher = SHA256()
            bodyHasher.update(data: Data(opening.utf8))
            for await chunk in chunks { bodyHasher.update(data: chunk) }
            bodyHasher.update(data: Data(closing.utf8))
            let bodyLength = Int64(opening.utf8.count) + fileBytes + Int64(closing.utf8.count)

            #expect(boundary.value.hasPrefix("Boundary+"))
            #expect(json["bytes"]?.intValue == bodyLength)
            let expectedDigest = Self.hex(bodyHasher.finalize())
            #expect(json["sha256"]?.stringValue == expectedDigest)

            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            print(
                "LargeMultipartUpload: \(fileBytes >> 20) MiB file part, body \(bodyLength) bytes "
                    + "in \(String(format: "%.1f", seconds)) s (\(String(format: "%.0f", Double(bodyLength) / 1e6 / seconds)) MB/s); "
                    + "SHA-256 of the body: server \(json["sha256"]?.stringValue ?? "?"), expected \(expectedDigest); "
                    + "VmRSS \(baselineResident / 1024) MiB before, \(Self.statusKiB("VmRSS") / 1024) MiB after; "
                    + "VmHWM (process peak) \(Self.statusKiB("VmHWM") / 1024) MiB")
        }
    }

    static func hex(_ digest: SHA256.Digest) -> String {
        digest.map { String(format: "%02x", $0) }.joined()
    }

    /// A `/proc/self/status` field in KiB (0 when unreadable).
    static func statusKiB(_ field: String) -> Int {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix(field + ":") })
        else { return 0 }
        return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
    }
}

/// The boundary the form was built with, read back after `constructingBody` ran.
private final class BoundaryBox: @unchecked Sendable {
    // @unchecked: written once inside `constructingBody`, which runs synchronously in `post`
    // before the value is read.
    var value = ""
}

/// `totalBytes` of generated data in 64 KiB chunks: a fixed pattern with each chunk's index
/// in its first 8 bytes, so a lost, repeated or reordered chunk changes the hash. Each
/// iteration produces the same bytes.
struct GeneratedChunks: AsyncSequence, Sendable {
    typealias Element = Data

    static let chunkSize = 64 << 10
    static let pattern: Data = {
        var pattern = Data(count: chunkSize)
        for index in pattern.indices { pattern[index] = UInt8(truncatingIfNeeded: index &* 131 &+ index >> 9) }
        return pattern
    }()

    let totalBytes: Int64

    struct AsyncIterator: AsyncIteratorProtocol {
        let totalBytes: Int64
        var produced: Int64 = 0
        var index: UInt64 = 0

        mutating func next() async -> Data? {
            guard produced < totalBytes else { return nil }
            let count = Int(Swift.min(Int64(GeneratedChunks.chunkSize), totalBytes - produced))
            var chunk = GeneratedChunks.pattern.prefix(count)
            withUnsafeBytes(of: index.bigEndian) { tag in
                for (offset, byte) in tag.prefix(count).enumerated() { chunk[chunk.startIndex + offset] = byte }
            }
            produced += Int64(count)
            index += 1
            return chunk
        }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(totalBytes: totalBytes) }
}
