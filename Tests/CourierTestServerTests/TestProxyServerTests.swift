import CourierTestServer
import Foundation
import Testing

/// The test proxies relay every byte a client sends, including those that arrive while the
/// proxy is still connecting upstream, and refuse a target they can't read.
@Suite("Test proxies: relaying and targets")
struct TestProxyServerTests {
    /// A request in absolute form whose body follows its head at once (as a client uploading
    /// sends it): the proxy reads body bytes before its upstream connection is up.
    @Test func aForwardedBodyArrivingWhileConnectingIsRelayedWhole() async throws {
        try await TestServer.withRunning { server in
            try await TestProxyServer.withRunning { proxy in
                let body = (0..<(2 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 7) }
                let head = "PUT http://127.0.0.1:\(server.port)/upload HTTP/1.1\r\nHost: 127.0.0.1:\(server.port)\r\n"
                    + "Content-Length: \(body.count)\r\nConnection: close\r\n\r\n"
                let exchange = try await RawHTTPClient.exchange(port: proxy.port, request: Array(head.utf8) + body, timeout: 30)
                let response = try #require(exchange.response)
                #expect(response.status == 200)
                #expect(response.json?["bytes"] as? Int == body.count)
                #expect(proxy.requestLines.count == 1)
            }
        }
    }

    /// A client that sends its `CONNECT` and leaves at once: the proxy's upstream connection
    /// (made after the client left) is closed too, not left open to the server while the proxy
    /// runs. (The proxy's upstream sockets are this process's: counted through /proc.)
    @Test(arguments: [false, true]) func aClientLeavingWhileTheProxyConnectsLeavesNoUpstreamConnection(socks: Bool) async throws {
        try await TestServer.withRunning { server in
            let request: [UInt8] =
                socks
                ? [5, 1, 0] + [5, 1, 0, 1, 127, 0, 0, 1, UInt8(server.port >> 8), UInt8(server.port & 0xFF)]
                : Array("CONNECT 127.0.0.1:\(server.port) HTTP/1.1\r\nHost: 127.0.0.1:\(server.port)\r\n\r\n".utf8)
            let leaveAndCount: @Sendable (Int) async throws -> Int = { proxyPort in
                try await Task.detached {
                    let fd = try RawHTTPClient.connect(host: "127.0.0.1", port: proxyPort, timeout: 5)
                    defer { close(fd) }
                    try RawHTTPClient.sendAll(fd, request)
                }.value
                // The proxy reaches the server, then closes that connection (hang bound 10 s).
                var waits = 0
                while server.connectionsAccepted == 0 || ClientSocketProbe.sockets(toPort: server.port) > 0, waits < 2_000 {
                    try await Task.sleep(for: .milliseconds(5))
                    waits += 1
                }
                return ClientSocketProbe.sockets(toPort: server.port)
            }
            let left =
                socks
                ? try await TestSOCKSProxyServer.withRunning { try await leaveAndCount($0.port) }
                : try await TestProxyServer.withRunning { try await leaveAndCount($0.port) }
            #expect(server.connectionsAccepted == 1)
            #expect(left == 0)
        }
    }

    /// A target port that is not one (out of range, negative, signed) gets 400, and the proxy
    /// keeps serving.
    @Test func aTargetPortOutOfRangeIsABadRequest() async throws {
        try await TestServer.withRunning { server in
            try await TestProxyServer.withRunning { proxy in
                for target in ["127.0.0.1:70000", "127.0.0.1:-1", "127.0.0.1:+80", "127.0.0.1:"] {
                    let exchange = try await RawHTTPClient.exchange(
                        port: proxy.port, "CONNECT \(target) HTTP/1.1\r\nHost: \(target)\r\n\r\n")
                    #expect(exchange.response?.status == 400, "\(target)")
                }
                let exchange = try await RawHTTPClient.exchange(
                    port: proxy.port, "GET http://127.0.0.1:\(server.port)/get HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n")
                #expect(exchange.response?.status == 200)
            }
        }
    }

    /// The SOCKS proxy checks the username/password sub-negotiation's version (RFC 1929: 1),
    /// so a client sending another one fails its test instead of passing.
    @Test func theSOCKSProxyRefusesAnAuthenticationVersionOtherThanOne() async throws {
        try await TestSOCKSProxyServer.withRunning(credentials: ("ada", "secret")) { proxy in
            for (version, expected) in [(UInt8(5), [UInt8(5), 2, 1, 1]), (UInt8(1), [UInt8(5), 2, 1, 0])] {
                let auth: [UInt8] = [version, 3] + Array("ada".utf8) + [6] + Array("secret".utf8)
                let exchange = try await RawHTTPClient.exchange(port: proxy.port, request: [5, 1, 2] + auth, timeout: 2)
                #expect(exchange.bytes == expected, "version \(version)")
            }
        }
    }
}
