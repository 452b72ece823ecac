import Crypto
import CourierTestServer
import Foundation
import Testing

@Suite("/upload counts and hashes bodies of any size while streaming")
struct UploadTests {
    /// Sends `blockCount` blocks of 1 MiB (each slightly different) and returns the response
    /// with the expected SHA-256.
    static func upload(to server: TestServer, blockCount: Int, chunked: Bool) async throws -> (ParsedResponse, String) {
        try await Task.detached {
            let fd = try RawHTTPClient.connect(host: server.host, port: server.port, timeout: 30)
            defer { close(fd) }
            let total = blockCount * 1024 * 1024
            let framing = chunked ? "Transfer-Encoding: chunked" : "Content-Length: \(total)"
            try RawHTTPClient.sendAll(fd, Array("PUT /upload HTTP/1.1\r\nHost: a\r\n\(framing)\r\nConnection: close\r\n\r\n".utf8))
            var hasher = SHA256()
            var block = (0..<(1024 * 1024)).map { UInt8(truncatingIfNeeded: $0 &* 31) }
            for index in 0..<blockCount {
                block[0] = UInt8(truncatingIfNeeded: index)
                hasher.update(data: block)
                if chunked {
                    try RawHTTPClient.sendAll(fd, Array("100000\r\n".utf8) + block + Array("\r\n".utf8))
                } else {
                    try RawHTTPClient.sendAll(fd, block)
                }
            }
            if chunked {
                try RawHTTPClient.sendAll(fd, Array("0\r\n\r\n".utf8))
            }
            let exchange = try RawHTTPClient.readAll(fd, stopWhenComplete: false)
            guard let response = exchange.response else { throw RawHTTPClient.Failure(description: "no response") }
            let digest = hasher.finalize().map { String(format: "%02x", $0) }.joined()
            return (response, digest)
        }.value
    }

    @Test("80 MiB with Content-Length (more than the 64 MiB the echo endpoints buffer)")
    func largeUpload() async throws {
        try await TestServer.withRunning { server in
            let (response, digest) = try await Self.upload(to: server, blockCount: 80, chunked: false)
            #expect(response.status == 200)
            #expect(response.json?["bytes"] as? Int == 80 * 1024 * 1024)
            #expect(response.string("sha256") == digest)
        }
    }

    @Test("50 MiB with chunked transfer coding")
    func chunkedUpload() async throws {
        try await TestServer.withRunning { server in
            let (response, digest) = try await Self.upload(to: server, blockCount: 50, chunked: true)
            #expect(response.status == 200)
            #expect(response.json?["bytes"] as? Int == 50 * 1024 * 1024)
            #expect(response.string("sha256") == digest)
        }
    }

    @Test("an empty body hashes to SHA-256 of nothing")
    func empty() async throws {
        try await TestServer.withRunning { server in
            let response = try await server.request("/upload", method: "POST", body: [])
            #expect(response.json?["bytes"] as? Int == 0)
            #expect(response.string("sha256") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        }
    }
}
