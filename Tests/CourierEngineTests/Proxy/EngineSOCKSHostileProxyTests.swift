import Foundation
import NIOCore
import NIOPosix
import Synchronization
import Testing

@testable import CourierEngine

/// A SOCKS5 "proxy" that answers from a script whatever the client sends: each read gets the
/// next answer (the greeting, then the authentication or `CONNECT`, then the HTTP request); an
/// empty answer closes the connection.
private final class ScriptedAnswers: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer
    private var answers: [[UInt8]]

    init(_ answers: [[UInt8]]) { self.answers = answers }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !answers.isEmpty else { return }
        let answer = answers.removeFirst()
        guard !answer.isEmpty else { return context.close(promise: nil) }
        context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(bytes: answer)), promise: nil)
    }
}

/// How many connections the scripted proxy accepted.
final class ConnectionCount: Sendable {
    let value = Atomic(0)
}

/// Hostile SOCKS5 answers: every one ends in a typed error or a correct response, never a
/// hang or a crash; and credentials or a host name SOCKS5 can't carry fail before any I/O.
@Suite("HTTPEngine against hostile SOCKS5 and CONNECT proxies")
struct EngineSOCKSHostileProxyTests {
    struct Script: Sendable, CustomStringConvertible {
        let description: String
        let answers: [[UInt8]]
        /// nil: the request succeeds.
        let refusal: ProxyRefusal?
        var user: String? = nil
    }

    static let http = Array("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok".utf8)
    static let bound255: [UInt8] = [5, 0, 0, 3, 255] + [UInt8](repeating: 0x61, count: 255) + [0, 80]

    static let scripts: [Script] = [
        Script(description: "bound address: a 255-byte name", answers: [[5, 0], bound255, http], refusal: nil),
        Script(
            description: "unknown address type", answers: [[5, 0], [5, 0, 0, 9, 1, 2, 3, 4, 0, 80]],
            refusal: .malformedAnswer("reply address type 9")),
        Script(
            description: "unsupported method (GSSAPI)", answers: [[5, 1]],
            refusal: .malformedAnswer("it chose authentication method 1, which was not offered")),
        Script(
            description: "method 2 without credentials", answers: [[5, 2]],
            refusal: .malformedAnswer("it chose authentication method 2, which was not offered")),
        Script(description: "greeting version 4", answers: [[4, 0]], refusal: .notASOCKS5Server(firstBytes: [4, 0])),
        Script(
            description: "reply version 4", answers: [[5, 0], [4, 0, 0, 1, 127, 0, 0, 1, 0, 80]],
            refusal: .malformedAnswer("reply version 4 (expected 5)")),
        Script(
            description: "authentication answer version 5", answers: [[5, 2], [5, 0]],
            refusal: .malformedAnswer("authentication answer version 5 (expected 1)"), user: "ada"),
        Script(description: "closes after the greeting", answers: [[5, 0], []], refusal: .closedDuringHandshake),
    ]

    @Test func aReplyWithBytesBehindItHandsThemOnAsTheOrigins() async throws {
        // A "response" right behind the CONNECT reply, before any request: handed on to the
        // HTTP handler, which refuses an unsolicited response (no hang, no response taken for it).
        let reply: [UInt8] = [5, 0, 0, 1, 127, 0, 0, 1, 0, 80] + Self.http
        try await Self.withScriptedProxy([[5, 0], reply]) { port in
            var configuration = EngineConfiguration()
            configuration.proxy = EngineProxy(host: "127.0.0.1", port: port, kind: .socks5h)
            configuration.connectTimeout = .seconds(20)
            let engine = try HTTPEngine(configuration: configuration)
            let url = try #require(URL(string: "http://origin.test:80/get"))
            let error = await engineError { _ = try await engine.collect(EngineRequest(url: url)) }
            #expect(error == .connectionLost("unsolicitedResponse"), "\(String(describing: error))")
            await engine.shutdown()
        }
    }

    @Test(arguments: [
        "HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm=x\r\nContent-Length: 0\r\n\r\n",
        "HTTP/1.1 200 Connection established\r\nContent-Length: 5\r\n\r\nhello",
    ])
    func aConnectProxyThatRefusesOrSendsABodyFailsOnce(answer: String) async throws {
        // A 407 (again and again) and a 200 with a body (fed to TLS as the origin's bytes): a
        // typed error after one connection to the proxy, no loop of attempts.
        let connections = ConnectionCount()
        try await Self.withScriptedProxy([Array(answer.utf8)], connections: connections) { port in
            var configuration = EngineConfiguration()
            configuration.proxy = EngineProxy(host: "127.0.0.1", port: port, username: "ada", password: "pw")
            configuration.connectTimeout = .seconds(20)
            let engine = try HTTPEngine(configuration: configuration)
            let url = try #require(URL(string: "https://origin.test/get"))
            let error = await engineError { _ = try await engine.collect(EngineRequest(url: url)) }
            #expect(error != nil)
            if answer.contains("407") {
                #expect(error?.description.contains("407") == true, "\(String(describing: error))")
            }
            #expect(connections.value.load(ordering: .relaxed) == 1)
            await engine.shutdown()
        }
    }

    @Test(arguments: [
        "HTTP/1.1 407 " + String(repeating: "A", count: 60_000) + "\r\n\r\n",
        "HTTP/1.1 407 \u{1B}[2J\u{1B}]0;pwned\u{07} Proxy Auth\r\n\r\n",
        "HTTP/1.1 \u{1B}[31m" + String(repeating: "B", count: 60_000) + "\r\n\r\n",
    ])
    func aConnectProxysStatusLineReachesTheErrorShortAndPrintable(answer: String) async throws {
        // The proxy's status line goes into the error (and so into logs and a terminal): cut
        // short and without control characters (no terminal escapes from a hostile proxy).
        try await Self.withScriptedProxy([Array(answer.utf8)]) { port in
            var configuration = EngineConfiguration()
            configuration.proxy = EngineProxy(host: "127.0.0.1", port: port)
            configuration.connectTimeout = .seconds(20)
            let engine = try HTTPEngine(configuration: configuration)
            let url = try #require(URL(string: "https://origin.test/get"))
            let error = await engineError { _ = try await engine.collect(EngineRequest(url: url)) }
            await engine.shutdown()
            let message = try #require(error).description
            #expect(message.count < 1_000, "\(message.count) characters")
            #expect(!message.unicodeScalars.contains { $0.properties.generalCategory == .control }, "\(message)")
            // (A head over 16 KiB that arrives in pieces is refused as too long instead.)
            if answer.hasPrefix("HTTP/1.1 407"), answer.utf8.count < 16_384 {
                #expect(message.contains("407"), "\(message)")
            }
        }
    }

    static func withScriptedProxy<T>(
        _ answers: [[UInt8]], connections: ConnectionCount? = nil, _ body: (Int) async throws -> T
    ) async throws -> T {
        let server = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .childChannelInitializer { channel in
                connections?.value.add(1, ordering: .relaxed)
                return channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(ScriptedAnswers(answers))
                }
            }
            .bind(host: "127.0.0.1", port: 0)
            .get()
        do {
            let result = try await body(try #require(server.localAddress?.port))
            try await server.close()
            return result
        } catch {
            try? await server.close()
            throw error
        }
    }

    @Test(arguments: scripts)
    func hostileAnswer(_ script: Script) async throws {
        try await Self.withScriptedProxy(script.answers) { port in
            var configuration = EngineConfiguration()
            configuration.proxy = EngineProxy(
                host: "127.0.0.1", port: port, username: script.user, password: script.user, kind: .socks5h)
            configuration.connectTimeout = .seconds(20)
            let engine = try HTTPEngine(configuration: configuration)
            let url = try #require(URL(string: "http://origin.test:80/get"))
            let error = await engineError { _ = try await engine.collect(EngineRequest(url: url)) }
            if let refusal = script.refusal {
                #expect(
                    error == .proxyFailed(proxy: "127.0.0.1:\(port)", target: "origin.test:80", refusal: refusal),
                    "\(String(describing: error))")
            } else {
                #expect(error == nil, "\(String(describing: error))")
            }
            await engine.shutdown()
        }
    }

    @Test(arguments: [
        ("u", String(repeating: "p", count: 256)),
        (String(repeating: "u", count: 256), "p"),
        ("", "p"),
        ("u", String(repeating: "\u{E9}", count: 128)),  // 256 bytes in UTF-8
    ])
    func credentialsSOCKS5CannotCarryFailBeforeConnecting(user: String, password: String) async throws {
        try await Self.expectRefusedBeforeConnecting(
            through: EngineProxy(host: "127.0.0.1", port: 9, username: user, password: password, kind: .socks5),
            url: "http://127.0.0.1:80/get")
    }

    @Test func aHostNameSOCKS5CannotCarryFailsBeforeConnecting() async throws {
        let label = String(repeating: "a", count: 60)
        let host = [label, label, label, label, label].joined(separator: ".")  // 304 bytes
        try await Self.expectRefusedBeforeConnecting(
            through: EngineProxy(host: "127.0.0.1", port: 9, kind: .socks5h), url: "http://\(host):80/get")
    }

    /// Expects a GET of `url` through `proxy` to fail with `invalidURL` naming SOCKS5's 255-byte
    /// limit. Nothing listens on the proxy's port 9: reaching it would be "cannot connect".
    static func expectRefusedBeforeConnecting(through proxy: EngineProxy, url text: String) async throws {
        var configuration = EngineConfiguration()
        configuration.proxy = proxy
        let engine = try HTTPEngine(configuration: configuration)
        let url = try #require(URL(string: text))
        let error = await engineError { _ = try await engine.collect(EngineRequest(url: url)) }
        await engine.shutdown()
        guard case .invalidURL(let reason) = error else {
            Issue.record("expected invalidURL, got \(String(describing: error))")
            return
        }
        #expect(reason.contains("255"), "\(reason)")
    }
}
