import CourierTestServer
import Foundation
import Testing

/// `@file` bodies and `field@file` parts are streamed from disk: a 256 MiB file goes up with a
/// peak resident set far below its size (the kernel's `ru_maxrss` for the child).
@Suite("courier streams file bodies")
struct BodyFileStreamingCLITests {
    static let fileSize: Int64 = 256 << 20
    /// Far below the file's size; `courier`'s own footprint (debug build) is a few tens of MiB.
    static let peakBound = 128 << 20

    /// A sparse file of `fileSize` zero bytes.
    static func bigFile() throws -> URL {
        let file = try CourierProcess.temporaryDirectory().appendingPathComponent("big.bin")
        _ = FileManager.default.createFile(atPath: file.path, contents: nil)
        let handle = try FileHandle(forWritingTo: file)
        try handle.truncate(atOffset: UInt64(fileSize))
        try handle.close()
        return file
    }

    @Test("@file: 256 MiB uploaded whole, peak RSS well under the file size")
    func bodyFileStreamed() async throws {
        let server = try await TestServer.start()
        defer { Task { try await server.shutdown() } }
        let file = try Self.bigFile()
        defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
        let measured = try await MeasuredCourierRun.run(["POST", server.baseURL.absoluteString + "/upload", "@\(file.path)"])
        #expect(measured.run.status == 0, "\(measured)")
        #expect((try? measured.run.json()["bytes"] as? Int) == Int(Self.fileSize), "\(measured)")
        #expect(measured.peakResidentBytes < Self.peakBound, "\(measured)")
    }

    @Test("field@file: a 256 MiB multipart part, peak RSS well under the file size")
    func multipartFileStreamed() async throws {
        let server = try await TestServer.start()
        defer { Task { try await server.shutdown() } }
        let file = try Self.bigFile()
        defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
        let measured = try await MeasuredCourierRun.run([server.baseURL.absoluteString + "/upload", "doc@\(file.path)"])
        #expect(measured.run.status == 0, "\(measured)")
        #expect(((try? measured.run.json()["bytes"] as? Int) ?? 0) > Int(Self.fileSize), "\(measured)")
        #expect(measured.peakResidentBytes < Self.peakBound, "\(measured)")
    }

    @Test("@file with -p HB: the request head gives the file's length; the body is not shown for a large file")
    func bodyFilePrinted() async throws {
        let server = try await TestServer.start()
        defer { Task { try await server.shutdown() } }
        let file = try Self.bigFile()
        defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
        let measured = try await MeasuredCourierRun.run([
            "-p", "HB", "PUT", server.baseURL.absoluteString + "/upload", "@\(file.path)",
        ])
        #expect(measured.run.status == 0, "\(measured)")
        #expect(measured.run.output.contains("Content-Length: \(Self.fileSize)"), "\(measured)")
        #expect(measured.run.output.contains("(body of \(Self.fileSize) bytes from \(file.path), not shown)"), "\(measured)")
        #expect(measured.peakResidentBytes < Self.peakBound, "\(measured)")
    }

    @Test("@directory is refused before sending: exit 2 naming it")
    func bodyFileDirectory() async throws {
        let server = try await TestServer.start()
        defer { Task { try await server.shutdown() } }
        let directory = try CourierProcess.temporaryDirectory()
        let run = try await CourierProcess.run([server.baseURL.absoluteString + "/post", "@\(directory.path)"])
        #expect(run.status == 2, "\(run)")
        #expect(run.errors.contains(directory.path), "\(run)")
        #expect(server.requestsReceived == 0)
    }
}
