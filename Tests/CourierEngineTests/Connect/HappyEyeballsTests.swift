import CourierTestServer
import Foundation
import NIOCore
import Testing

#if canImport(Glibc)
import Glibc
#endif

@testable import CourierEngine

/// A host whose first address never answers (a listener whose accept queue is full: the kernel
/// drops further SYNs) and whose second address works. Tried one after another, the first
/// attempt takes the whole connect timeout; raced as RFC 8305 says, the second address wins.
@Suite("Happy Eyeballs")
struct HappyEyeballsTests {
    /// A loopback listener that never accepts, its backlog filled: connects to it hang.
    final class BlackHole {
        private var descriptors: [Int32] = []
        private(set) var port = 0

        init() throws {
            let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            guard listener >= 0 else { throw EngineTestFailure("socket failed") }
            descriptors.append(listener)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            address.sin_port = 0
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, length) }
            }
            guard bound == 0, listen(listener, 0) == 0 else { throw EngineTestFailure("bind/listen failed") }
            _ = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
            }
            port = Int(UInt16(bigEndian: address.sin_port))
            // Fill the accept queue with connections nobody accepts.
            for _ in 0..<3 {
                let filler = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
                guard filler >= 0 else { continue }
                descriptors.append(filler)
                _ = withUnsafePointer(to: &address) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(filler, $0, length) }
                }
            }
            usleep(200_000)
        }

        deinit { descriptors.forEach { close($0) } }
    }

    @Test func aSilentFirstAddressDoesNotTakeTheWholeConnectTimeout() async throws {
        let hole = try BlackHole()
        try await TestServer.withRunning { server in
            var configuration = EngineConfiguration()
            configuration.connectTimeout = .seconds(60)
            let silent = try SocketAddress(ipAddress: "127.0.0.1", port: hole.port)
            let working = try SocketAddress(ipAddress: "127.0.0.1", port: server.port)
            configuration.resolveOverride = { _, _ in [silent, working] }
            let engine = try HTTPEngine(configuration: configuration)
            let started = ContinuousClock.now
            let response = try await engine.collect(EngineRequest(url: try #require(URL(string: "http://happy-eyeballs.test:\(server.port)/get"))))
            let elapsed = ContinuousClock.now - started
            #expect(response.head.status == .ok)
            // Sequential attempts would fail with a connect timeout after 60 s; a hang bound,
            // not a timing assertion: Happy Eyeballs starts the next attempt after 250 ms (a full
            // parallel run on 2 cores has seen the whole request take 21 s).
            #expect(elapsed < .seconds(45), "\(elapsed)")
            await engine.shutdown()
        }
        withExtendedLifetime(hole) {}
    }

    @Test func allAddressesRefusingIsCannotConnect() async throws {
        // A bound socket that never listens: refused for as long as it lives, and no server of a
        // test running in parallel can take its port (a just-freed port can be taken).
        let closed = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(closed) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(closed, $0, length) == 0 && getsockname(closed, $0, &length) == 0 }
        }
        try #require(bound)
        let port = Int(UInt16(bigEndian: address.sin_port))
        var configuration = EngineConfiguration()
        let refusing = try SocketAddress(ipAddress: "127.0.0.1", port: port)
        configuration.resolveOverride = { _, _ in [refusing, refusing] }
        let engine = try HTTPEngine(configuration: configuration)
        let error = await engineError {
            _ = try await engine.collect(EngineRequest(url: try #require(URL(string: "http://refusing.test:\(port)/"))))
        }
        guard case .cannotConnect(let host, _, let reason) = error else {
            Issue.record("expected cannotConnect, got \(String(describing: error))")
            await engine.shutdown()
            return
        }
        #expect(host == "refusing.test")
        #expect(reason.lowercased().contains("refused"), "\(reason)")
        await engine.shutdown()
    }
}
