import CourierEngine
import CourierTestServer
import Crypto
import Foundation
import NIOCore
import NIOHTTP1
import Synchronization
import Testing

@testable import Courier
@testable import CourierEngine

#if canImport(Glibc)
import Glibc
#endif

/// The multipart body streams: bounded memory, and the server receives exactly the bytes.
@Suite(.serialized) struct MultipartStreamingTests {
    static func peakResidentBytes() -> Int {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return usage.ru_maxrss * 1024
    }

    /// The current resident set (`VmRSS` in `/proc/self/status`).
    static func currentResidentBytes() -> Int {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") })
        else { return 0 }
        return (Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0) * 1024
    }

    static func sparseFile(size: Int64) throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("courier-sparse-\(UUID().uuidString).bin")
        guard FileManager.default.createFile(atPath: url.path, contents: nil),
            let handle = FileHandle(forWritingAtPath: url.path)
        else { throw CourierError.requestSerializationFailed(.fileNotReadable(path: url.path)) }
        try handle.truncate(atOffset: UInt64(size))
        try handle.close()
        return url
    }

    @Test func twoHundredMebibytesStreamWithBoundedMemory() async throws {
        let size: Int64 = 200 << 20
        let url = try Self.sparseFile(size: size)
        defer { try? FileManager.default.removeItem(at: url) }
        let form = MultipartFormData()
        form.appendPart(formData: Data("before".utf8), name: "a")
        try form.appendPart(fileURL: url, name: "big")
        let body = form.makeRequestBody()
        guard case .stream(let length, let produce) = body.storage else {
            Issue.record("expected a streamed body")
            return
        }
        #expect(length == form.contentLength)
        let counter = ByteCounter(watching: url.path)
        try await produce(BodyWriter(writeChunk: { chunk in counter.add(chunk.readableBytes) }))
        print("multipart 200 MiB: read at most \(counter.maximumReadAhead >> 10) KiB ahead of what was written; process peak RSS \(Self.peakResidentBytes() >> 20) MiB")
        #expect(Int64(counter.total) == form.contentLength)
        // Bounded memory, measured on the file itself rather than on the process's RSS (which
        // the suites running beside this one move by hundreds of MiB): how far the producer's
        // read position ever ran ahead of the bytes handed to the writer. A producer that held
        // the file would be 200 MiB ahead at the first chunk.
        #expect(counter.sawReadPosition)
        #expect(counter.maximumReadAhead < 4 << 20)
    }

    @Test func uploadToPostIsParsedIntoFormAndFiles() async throws {
        let server = try await TestServer.start()
        let engine = try HTTPEngine()
        defer { Task { await engine.shutdown(); try? await server.shutdown() } }
        let serializer = HTTPRequestSerializer()
        let multipart = try serializer.multipartFormRequest(
            method: "POST", urlString: server.baseURL.absoluteString + "/post", parameters: ["name": "courier", "list": [1, 2]]
        ) { form in
            form.appendPart(fileData: Data("hello file".utf8), name: "upload", fileName: "hello.txt", mimeType: "text/plain")
        }
        let response = try await engine.collect(Self.engineRequest(multipart))
        #expect(response.head.status.code == 200)
        let json = try JSONValue(parsing: Data(response.body.readableBytesView))
        #expect(json["form"]?["name"] == "courier")
        #expect(json["form"]?["list[]"] == ["1", "2"])
        #expect(json["files"]?["upload"] == "hello file")
        #expect(json["headers"]?["Content-Type"]?.stringValue == multipart.formData?.contentType)
    }

    @Test func uploadIsHashedByTheServer() async throws {
        let server = try await TestServer.start()
        let engine = try HTTPEngine()
        defer { Task { await engine.shutdown(); try? await server.shutdown() } }
        var pattern = Data(count: 1 << 20)
        for index in pattern.indices { pattern[index] = UInt8(truncatingIfNeeded: index &* 31 &+ 7) }
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("courier-upload-\(UUID().uuidString).bin")
        defer { try? FileManager.default.removeItem(at: url) }
        #expect(FileManager.default.createFile(atPath: url.path, contents: nil))
        let handle = try #require(FileHandle(forWritingAtPath: url.path))
        for _ in 0..<24 { try handle.write(contentsOf: pattern) }
        try handle.close()
        let multipart = try HTTPRequestSerializer().multipartFormRequest(
            method: "PUT", urlString: server.baseURL.absoluteString + "/upload"
        ) { form in try form.appendPart(fileURL: url, name: "blob") }
        let form = try #require(multipart.formData)
        var hasher = SHA256()
        try await form.writeBody { hasher.update(data: $0) }
        let expected = hasher.finalize().map { String(format: "%02x", $0) }.joined()
        let response = try await engine.collect(Self.engineRequest(multipart))
        let json = try JSONValue(parsing: Data(response.body.readableBytesView))
        #expect(json["bytes"]?.intValue == form.contentLength)
        #expect(json["sha256"]?.stringValue == expected)
    }

    /// The issue's 1 GiB upload; slow in debug builds, so opt in with `COURIER_LARGE_UPLOAD=1`.
    @Test(.enabled(if: ProcessInfo.processInfo.environment["COURIER_LARGE_UPLOAD"] != nil))
    func oneGibibyteUploadIsHashedByTheServer() async throws {
        let url = try Self.sparseFile(size: 1 << 30)
        defer { try? FileManager.default.removeItem(at: url) }
        let server = try await TestServer.start()
        let engine = try HTTPEngine()
        defer { Task { await engine.shutdown(); try? await server.shutdown() } }
        let multipart = try HTTPRequestSerializer().multipartFormRequest(
            method: "POST", urlString: server.baseURL.absoluteString + "/upload", parameters: ["size": "1GiB"]
        ) { form in try form.appendPart(fileURL: url, name: "blob") }
        let form = try #require(multipart.formData)
        var hasher = SHA256()
        try await form.writeBody { hasher.update(data: $0) }
        let expected = hasher.finalize().map { String(format: "%02x", $0) }.joined()
        let baseline = Self.currentResidentBytes()
        let start = Date()
        let response = try await engine.collect(Self.engineRequest(multipart))
        let json = try JSONValue(parsing: Data(response.body.readableBytesView))
        print("multipart 1 GiB upload: \(String(format: "%.1f", Date().timeIntervalSince(start))) s, RSS \(baseline >> 20) MiB before, \(Self.currentResidentBytes() >> 20) MiB after, process peak \(Self.peakResidentBytes() >> 20) MiB")
        #expect(json["bytes"]?.intValue == form.contentLength)
        #expect(json["sha256"]?.stringValue == expected)
    }

    static func engineRequest(_ multipart: MultipartRequest) throws -> EngineRequest {
        let request = multipart.urlRequest
        let url = try #require(request.url)
        var headers = HTTPHeaders()
        for (name, value) in (request.allHTTPHeaderFields ?? [:]).sorted(by: { $0.key < $1.key }) {
            headers.add(name: name, value: value)
        }
        return EngineRequest(method: request.httpMethod ?? "POST", url: url, headers: headers, body: multipart.makeRequestBody())
    }
}

/// Counts bytes written from any thread and samples the resident set every 64 chunks.
final class ByteCounter: Sendable {
    private let state = Mutex((bytes: 0, chunks: 0, maximumReadAhead: Int64(0), sawReadPosition: false))
    private let watchedPath: String?

    /// Counts the bytes written; with `path`, also samples how far the read position of the
    /// descriptor open on that file runs ahead of them.
    init(watching path: String? = nil) {
        self.watchedPath = path.map { URL(fileURLWithPath: $0).resolvingSymlinksInPath().path }
    }

    func add(_ bytes: Int) {
        let (sample, total) = state.withLock { state -> (Bool, Int) in
            state.bytes += bytes
            state.chunks += 1
            return (state.chunks % 32 == 1, state.bytes)
        }
        guard sample, let watchedPath, let position = Self.readPosition(ofFileAt: watchedPath) else { return }
        state.withLock {
            $0.sawReadPosition = true
            $0.maximumReadAhead = max($0.maximumReadAhead, position - Int64(total))
        }
    }

    var total: Int { state.withLock { $0.bytes } }
    var maximumReadAhead: Int64 { state.withLock { $0.maximumReadAhead } }
    var sawReadPosition: Bool { state.withLock { $0.sawReadPosition } }

    /// The file offset (`/proc/self/fdinfo`) of this process's descriptor open on `path`.
    static func readPosition(ofFileAt path: String) -> Int64? {
        guard let descriptors = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") else { return nil }
        for descriptor in descriptors {
            guard (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(descriptor)")) == path,
                let info = try? String(contentsOfFile: "/proc/self/fdinfo/\(descriptor)", encoding: .utf8),
                let line = info.split(separator: "\n").first(where: { $0.hasPrefix("pos:") })
            else { continue }
            return Int64(line.dropFirst(4).trimmingCharacters(in: .whitespaces))
        }
        return nil
    }
}
