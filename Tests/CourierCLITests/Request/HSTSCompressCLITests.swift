import CourierTestServer
import Crypto
import Foundation
import Testing

/// `--hsts FILE` (curl's: the file is read, then written with what the exchange taught) and
/// `-x` on streamed bodies: a 256 MiB `@file` compressed as it is sent, with a peak resident
/// set far below its size.
@Suite("courier --hsts and -x streaming")
struct HSTSCompressCLITests {
    @Test("--hsts: an https answer is written to the file; a later http:// URL goes over TLS to the same port")
    func hstsFileRoundTrip() async throws {
        try await TestServer.withRunning(.init(tls: .valid)) { server in
            let folder = try CourierProcess.temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: folder) }
            let file = folder.appendingPathComponent("hsts.txt")
            let ca = folder.appendingPathComponent("ca.pem")
            try Data(TestCertificateAuthority.shared.rootCertificatePEM.utf8).write(to: ca)
            let port = server.port
            let teach = try await CourierProcess.run([
                "--verify", ca.path, "--hsts", file.path,
                "https://localhost:\(port)/response-headers?Strict-Transport-Security=max-age%3D3600;%20includeSubDomains",
            ])
            #expect(teach.status == 0, "\(teach)")
            let text = try String(contentsOf: file, encoding: .utf8)
            #expect(text.contains("\n.localhost \""), "\(text)")

            let upgraded = try await CourierProcess.run(["-v", "--verify", ca.path, "--hsts", file.path, "http://localhost:\(port)/get"])
            #expect(upgraded.status == 0, "\(upgraded)")
            #expect(upgraded.output.contains("HSTS: http://localhost:\(port)/get upgraded to https://localhost:\(port)/get"), "\(upgraded)")
            #expect(upgraded.output.contains("HTTP/1.1 200") || upgraded.output.contains("HTTP/2 200"), "\(upgraded)")

            // Without the file, the same URL speaks plain http to a TLS port and fails.
            let plain = try await CourierProcess.run(["--verify", ca.path, "--timeout", "5", "http://localhost:\(port)/get"])
            #expect(plain.status != 0, "\(plain)")
        }
    }

    @Test("--hsts names an unusable file: exit 2")
    func hstsUnusableFile() async throws {
        let folder = try CourierProcess.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let run = try await CourierProcess.run(["--hsts", folder.path, "http://127.0.0.1:9/get"])
        #expect(run.status == 2, "\(run)")
        #expect(run.errors.contains(folder.path), "\(run)")
    }

    @Test("-x @file: 256 MiB deflated as it is sent (chunked, no Content-Length), peak RSS well under the file size")
    func compressedFileStreamed() async throws {
        let server = try await TestServer.start()
        defer { Task { try await server.shutdown() } }
        let folder = try CourierProcess.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("big.json")
        // JSON-like text, 1 MiB repeated: what an API upload compresses like.
        var line = Data()
        var index = 0
        while line.count < 1 << 20 {
            line += Data("{\"id\":\(index),\"name\":\"item \(index)\",\"ok\":true},\n".utf8)
            index += 1
        }
        line = line.prefix(1 << 20)
        _ = FileManager.default.createFile(atPath: file.path, contents: nil)
        let handle = try FileHandle(forWritingTo: file)
        var hasher = SHA256()
        for _ in 0..<256 {
            try handle.write(contentsOf: line)
            hasher.update(data: line)
        }
        try handle.close()
        let expected = hasher.finalize().map { String(format: "%02x", $0) }.joined()

        let measured = try await MeasuredCourierRun.run(["-x", "POST", server.baseURL.absoluteString + "/upload", "@\(file.path)"])
        #expect(measured.run.status == 0, "\(measured)")
        let answer = try measured.run.json()
        #expect(answer["bytes"] as? Int == 256 << 20, "\(measured)")
        #expect(answer["sha256"] as? String == expected, "\(measured)")
        #expect(answer["content_encoding"] as? String == "deflate", "\(measured)")
        #expect(answer["content_length"] is NSNull, "\(measured)")
        #expect((answer["encoded_bytes"] as? Int ?? .max) < 64 << 20, "\(measured)")
        #expect(measured.peakResidentBytes < BodyFileStreamingCLITests.peakBound, "\(measured)")
    }
}
