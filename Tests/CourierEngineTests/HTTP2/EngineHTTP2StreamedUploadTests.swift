@testable import CourierEngine
import CourierTestServer
import Crypto
import Foundation
import NIOCore
import Testing

/// A streamed request body over HTTP/2 goes out as DATA frames with no empty ones between its
/// batches: servers count empty DATA frames as abuse (NIOHTTP2 resets the stream after one in
/// a row), which failed every streamed upload past its third batch.
@Suite("HTTPEngine HTTP/2 streamed uploads")
struct EngineHTTP2StreamedUploadTests {
    @Test(arguments: [Int64?.none, Int64(2 << 20)])
    func aStreamedBodyOfManyBatchesArrivesWhole(length: Int64?) async throws {
        var configuration = EngineConfiguration()
        configuration.tls.trustsSystemRoots = false
        configuration.tls.additionalTrustRootsDER = [try TestCertificateAuthority.shared.rootCertificateDER]
        try await withEngine(server: .init(tls: .valid), engine: configuration) { engine, server in
            let chunk = ByteBuffer(bytes: (0..<(64 << 10)).map { UInt8(truncatingIfNeeded: $0 &* 7) })
            let body = RequestBody.stream(length: length) { writer in
                for _ in 0..<32 { try await writer.write(chunk) }
            }
            let response = try await engine.collect(EngineRequest(method: "POST", url: server.url("/upload"), body: body))
            #expect(response.metrics.networkProtocolName == "h2")
            #expect(response.head.status == .ok)
            var hasher = SHA256()
            for _ in 0..<32 { hasher.update(data: Data(chunk.readableBytesView)) }
            let expected = hasher.finalize().map { String(format: "%02x", $0) }.joined()
            let json = try response.json()
            #expect(json["bytes"] as? Int == 2 << 20)
            #expect(json["sha256"] as? String == expected)
            #expect(response.metrics.requestBodyBytesSent == 2 << 20, "progress counted each chunk once")
        }
    }
}
