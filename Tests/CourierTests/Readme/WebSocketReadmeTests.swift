import Courier
import CourierTestServer
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// The README's WebSocket example and the WebSockets article's, run against the test server.
@Suite("README and article: WebSockets")
struct WebSocketReadmeTests {
    @Test("the README's example: a pinned manager, JSON out, replies in a for-try-await loop, a close")
    func readmeExample() async throws {
        try await TestServer.withRunning(.init(tls: .valid)) { server in
            // The example begins
            struct Greeting: Codable { var hello: String }
            let authority = server.certificateAuthority
            var policy = SecurityPolicy(pinningMode: .certificate,
                                        pinnedCertificates: [try Certificate(pemEncoded: authority.intermediateCertificatePEM)])
            policy.trustedRootCertificates = [try Certificate(derEncoded: Data(authority.rootCertificateDER))]
            let manager = HTTPSessionManager(baseURL: URL(string: "wss://localhost:\(server.port)"))
            try manager.setSecurityPolicy(policy)

            guard let url = URL(string: "wss://localhost:\(server.port)/ws/echo") else { return }
            let socket = manager.webSocketTask(with: url)
            socket.resume()                                          // the handshake; send waits for it
            let json = try JSONEncoder().encode(Greeting(hello: "world"))
            try await socket.send(.string(String(decoding: json, as: UTF8.self)))
            for try await message in socket.messages {               // ends after a normal close
                guard case .string(let text) = message else { continue }
                print(try JSONDecoder().decode(Greeting.self, from: Data(text.utf8)).hello)   // world
                socket.cancel(with: .normalClosure, reason: nil)     // the close handshake
            }
            print(socket.closeCode)                                  // normalClosure
            // The example ends
            #expect(socket.closeCode == .normalClosure)
            #expect(server.webSocketClosesReceived == [1000])
        }
    }

    @Test("the article's first example")
    func articleExample() async throws {
        try await TestServer.withRunning { server in
            // The example begins
            let manager = URLSessionManager()
            guard let url = URL(string: "ws://127.0.0.1:\(server.port)/ws/echo") else { return }
            let socket = manager.webSocketTask(with: url, protocols: ["chat.v1"])
            socket.resume()
            try await socket.send(.string("hello"))
            let reply = try await socket.receive()                   // .string("hello")
            let roundTrip = try await socket.sendPing()              // resolves on the matching pong
            print(reply, roundTrip, socket.negotiatedProtocol ?? "none", socket.usesPerMessageDeflate)
            socket.cancel(with: .normalClosure, reason: Data("bye".utf8))
            // The example ends
            #expect(reply == .string("hello"))
            #expect(socket.negotiatedProtocol == "chat.v1")
        }
    }

    @Test("the article's configuration example")
    func configurationExample() async throws {
        try await TestServer.withRunning { server in
            // The example begins
            var configuration = SessionConfiguration()
            configuration.webSocket.pingInterval = .seconds(20)      // automatic pings
            configuration.webSocket.pongTimeout = .seconds(10)       // no pong: the connection is dropped (1006)
            configuration.webSocket.perMessageDeflate = true         // offer RFC 7692 (the default)
            configuration.webSocket.closeTimeout = .seconds(2)       // how long a close waits for the server's
            configuration.webSocket.allowsHTTP2 = true               // a stream of an open HTTP/2 connection (the default)
            let manager = URLSessionManager(configuration: configuration)
            // The example ends
            let socket = manager.webSocketTask(with: try #require(URL(string: "ws://127.0.0.1:\(server.port)/ws/echo")))
            socket.resume()
            try await socket.send(.string("configured"))
            #expect(try await socket.receive() == .string("configured"))
            #expect(socket.usesPerMessageDeflate)
            socket.cancel(with: .normalClosure, reason: nil)
        }
    }

    @Test("the article's HTTP/2 example: a socket is a stream of the request's connection")
    func http2Example() async throws {
        try await TestServer.withRunning(.init(tls: .valid)) { server in
            var configuration = SessionConfiguration()
            configuration.tls.additionalTrustRootsDER = [server.certificateAuthority.rootCertificateDER]
            let api = try #require(URL(string: "https://localhost:\(server.port)"))
            let live = try #require(URL(string: "wss://localhost:\(server.port)"))
            // The example begins
            let manager = URLSessionManager(configuration: configuration)
            _ = try await manager.data(for: URLRequest(url: api.appendingPathComponent("get")))
            let socket = manager.webSocketTask(with: live.appendingPathComponent("ws/echo"))
            socket.resume()
            try await socket.send(.string("over h2"))
            print(socket.metrics?.networkProtocolName ?? "-")    // h2: a stream of the request's connection
            // The example ends
            #expect(try await socket.receive() == .string("over h2"))
            #expect(socket.metrics?.networkProtocolName == "h2")
            #expect(socket.response?.statusCode == 200)
            #expect(server.connectionsAccepted == 1, "no connection of its own")
            socket.cancel(with: .normalClosure, reason: nil)
        }
    }
}
