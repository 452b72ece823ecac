import CourierEngine
import CourierTestServer
import Foundation
import Testing

/// The head an HTTP proxy reads for an http request in absolute form: the configured
/// `Proxy-Authorization`, then the decompressor's `Accept-Encoding` last, as before the engine
/// added `Accept-Encoding` itself (the decompressor, outbound of the handler, appended it after
/// the handler's proxy credentials). The order of fields on the wire is what a proxy or a
/// captured trace sees; moving `Accept-Encoding` into the head must not change it.
@Suite("HTTPEngine: the head an HTTP proxy reads")
struct EngineProxyHeadOrderTests {
    @Test func proxyCredentialsComeBeforeAcceptEncoding() async throws {
        try await HostileServer.withRunning(.ok()) { proxy in
            var configuration = EngineConfiguration()
            configuration.proxy = EngineProxy(host: "127.0.0.1", port: proxy.port, username: "ada", password: "secret")
            let engine = try HTTPEngine(configuration: configuration)
            do {
                let url = try #require(URL(string: "http://origin.invalid/x"))
                let response = try await engine.collect(EngineRequest(url: url))
                #expect(response.head.status == .ok)
                await engine.shutdown()
            } catch {
                await engine.shutdown()
                throw error
            }
            let head = try #require(proxy.requestHeads.first)
            let names = head.split(separator: "\r\n").dropFirst().compactMap { line in
                line.split(separator: ":", maxSplits: 1).first.map { $0.lowercased() }
            }
            let credentials = try #require(names.firstIndex(of: "proxy-authorization"), "\(head)")
            let encoding = try #require(names.firstIndex(of: "accept-encoding"), "\(head)")
            #expect(credentials < encoding, "\(names)")
            #expect(names.last == "accept-encoding", "\(names)")
        }
    }
}
