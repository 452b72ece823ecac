import Courier
import CourierTestServer
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// The README's HSTS and request-compression example, against the TLS test server named
/// `localhost`.
@Suite("README HSTS and compression")
struct HSTSCompressionReadmeTests {
    @Test("the README's HSTS and compression example")
    func readmeHSTSAndCompressionExample() async throws {
        try await TestServer.withRunning(.init(tls: .valid)) { server in
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("readme-hsts-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: folder) }
            let hstsFile = folder.appendingPathComponent("hsts.txt")
            var status = 0
            var upgraded: URL?
            do {
                // The example begins
                var configuration = SessionConfiguration()
                configuration.tls.additionalTrustRootsDER = [server.certificateAuthority.rootCertificateDER]
                let hsts = try HSTSStore(contentsOf: hstsFile)   // curl's HSTS file; empty when missing
                configuration.hsts = hsts                         // off unless set, as in curl
                let manager = URLSessionManager(configuration: configuration)
                // Request bodies gzipped as they are sent (bounded memory, chunked); plain after a 415.
                manager.interceptor = RequestCompressor(coding: .gzip, minimumSize: 1024)

                guard let teach = URL(string: "https://localhost:\(server.port)/response-headers?Strict-Transport-Security=max-age%3D600"),
                      let plain = URL(string: "http://localhost:\(server.port)/upload") else { return }
                _ = try await manager.data(for: URLRequest(url: teach))   // an https answer teaches the host
                var upload = URLRequest(url: plain)                       // http://, the same port
                upload.httpMethod = "POST"
                upload.httpBody = Data(repeating: UInt8(ascii: "a"), count: 100_000)
                let (object, response) = try await manager.data(for: upload)
                print(response.url?.absoluteString ?? "")  // https://localhost:PORT/upload: sent over TLS, gzipped
                print(object ?? "")                         // {"bytes": 100000, "content_encoding": "gzip", …}
                try hsts.write(to: hstsFile)                // atomically; the next run knows the host
                // The example ends
                status = response.statusCode
                upgraded = response.url
                let answer = object as? JSONValue
                #expect(answer?["bytes"] == .int(100_000))
                #expect(answer?["content_encoding"] == .string("gzip"))
            }
            #expect(status == 200)
            #expect(upgraded?.scheme == "https")
            #expect(try HSTSStore(contentsOf: hstsFile).isKnownHost("localhost"))
        }
    }
}
