import Courier
import CourierTestServer
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization
import Testing
import Tracing

/// `WebSocketTask` through the session: the handshake goes through the manager's headers,
/// cookie jar, interceptor, proxy, TLS settings and security policy; the task lives in the
/// manager's task list, posts its notifications and completes when the socket closes.
@Suite("WebSocketTask")
struct WebSocketTaskTests {
    private func wsURL(_ server: TestServer, _ path: String) throws -> URL {
        let base = server.baseURL.absoluteString.replacingOccurrences(of: "http", with: "ws", options: .anchored)
        return try #require(URL(string: base + path))
    }

    /// The README's shape: a pinned manager, JSON out, replies in a `for try await` loop, a close.
    @Test func aPinnedManagerSendsJSONAndReadsRepliesUntilItCloses() async throws {
        try await TestServer.withRunning(.init(tls: .valid)) { server in
            var configuration = SessionConfiguration()
            configuration.tls.additionalTrustRootsDER = [try TestCertificateAuthority.shared.rootCertificateDER]
            let manager = HTTPSessionManager(baseURL: URL(string: "wss://127.0.0.1:\(server.port)"), configuration: configuration)
            let intermediate = try Certificate(derEncoded: Data(try TestCertificateAuthority.shared.intermediateCertificateDER))
            try manager.setSecurityPolicy(SecurityPolicy(pinningMode: .certificate, pinnedCertificates: [intermediate]))

            let completed = Mutex<[SessionTask]>([])
            let observer = NotificationCenter.default.addObserver(forName: .courierTaskDidComplete, object: nil, queue: nil) { note in
                if let task = note.object as? WebSocketTask { completed.withLock { $0.append(task) } }
            }
            defer { NotificationCenter.default.removeObserver(observer) }

            let socket = manager.webSocketTask(with: try wsURL(server, "/ws/echo"))
            socket.resume()
            let json = try JSONSerialization.data(withJSONObject: ["hello": "world"])
            try await socket.send(.string(String(decoding: json, as: UTF8.self)))
            #expect(manager.tasks.contains(socket), "an open socket is one of the manager's tasks")
            #expect(socket.response?.statusCode == 101)
            #expect(socket.metrics?.secureConnectionStart != nil && socket.metrics?.responseStart != nil)
            #expect(socket.usesPerMessageDeflate)
            var replies = 0
            for try await message in socket.messages {
                guard case .string(let text) = message else { break }
                let object = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: String]
                #expect(object == ["hello": "world"])
                replies += 1
                socket.cancel(with: .normalClosure, reason: Data("bye".utf8))
            }
            #expect(replies == 1)
            #expect(socket.closeCode == .normalClosure)
            try await eventually(within: 10) { socket.state == .completed }
            #expect(socket.error == nil)
            #expect(!manager.tasks.contains(socket))
            try await eventually(within: 10) { completed.withLock { $0.contains(socket) } }
            #expect(server.webSocketClosesReceived == [1000])
        }
    }

    /// With an HTTP/2 connection already open (a request made it) the socket is one of its
    /// streams, through the same pinned policy; `allowsHTTP2 = false` gives it its own.
    @Test(arguments: [true, false])
    func aSocketIsAStreamOfTheManagersHTTP2ConnectionUnlessToldOtherwise(allowsHTTP2: Bool) async throws {
        try await TestServer.withRunning(.init(tls: .valid)) { server in
            var configuration = SessionConfiguration()
            configuration.tls.additionalTrustRootsDER = [try TestCertificateAuthority.shared.rootCertificateDER]
            configuration.webSocket.allowsHTTP2 = allowsHTTP2
            let manager = HTTPSessionManager(baseURL: URL(string: "https://localhost:\(server.port)"), configuration: configuration)
            let intermediate = try Certificate(derEncoded: Data(try TestCertificateAuthority.shared.intermediateCertificateDER))
            try manager.setSecurityPolicy(SecurityPolicy(pinningMode: .certificate, pinnedCertificates: [intermediate]))
            let warmUp = try await manager.get("get", serializer: JSONResponseSerializer())
            #expect(warmUp.metrics?.networkProtocolName == "h2")

            let socket = manager.webSocketTask(with: try #require(URL(string: "wss://localhost:\(server.port)/ws/echo")))
            socket.resume()
            try await socket.send(.string("which protocol"))
            #expect(try await socket.receive() == .string("which protocol"))
            #expect(socket.metrics?.networkProtocolName == (allowsHTTP2 ? "h2" : "http/1.1"))
            #expect(socket.response?.statusCode == (allowsHTTP2 ? 200 : 101))
            #expect(server.connectionsAccepted == (allowsHTTP2 ? 1 : 2))
            socket.cancel(with: .normalClosure, reason: nil)
            try await eventually(within: 10) { socket.state == .completed }
            #expect(socket.error == nil)
            #expect(server.webSocketClosesReceived == [1000])
        }
    }

    @Test func theHandshakeCarriesHeadersCookiesAndTheInterceptorsChanges() async throws {
        try await TestServer.withRunning { server in
            var configuration = SessionConfiguration()
            configuration.httpAdditionalHeaders = ["X-Configured": "yes"]
            let jar = HTTPCookieJar()
            jar.storeCookies(fromSetCookieFields: ["session=abc123; Path=/"], for: server.baseURL)
            configuration.cookieJar = jar
            let manager = HTTPSessionManager(baseURL: nil, configuration: configuration)
            let serializer = HTTPRequestSerializer()
            serializer.setValue("serializer", forHTTPHeaderField: "X-Serializer")
            manager.requestSerializer = serializer
            manager.interceptor = HeaderAdder()
            let socket = manager.webSocketTask(with: try wsURL(server, "/ws/headers"))
            socket.resume()
            guard case .string(let text) = try await socket.receive() else {
                Issue.record("expected the headers as text")
                return
            }
            let headers = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: String]
            #expect(headers?["X-Configured"] == "yes")
            #expect(headers?["X-Serializer"] == "serializer")
            #expect(headers?["X-Adapted"] == "by the interceptor")
            #expect(headers?["Cookie"] == "session=abc123")
            socket.cancel(with: .normalClosure, reason: nil)
        }
    }

    @Test func a401IsAnsweredOnceWithTheSessionCredential() async throws {
        try await TestServer.withRunning { server in
            let manager = URLSessionManager()
            manager.credential = URLCredential(user: "ada", password: "lovelace", persistence: .forSession)
            let socket = manager.webSocketTask(with: try wsURL(server, "/ws/basic-auth/ada/lovelace"))
            socket.resume()
            try await socket.send(.string("authenticated"))
            #expect(try await socket.receive() == .string("authenticated"))
            #expect(server.requestsReceived(forPath: "/ws/basic-auth/ada/lovelace") == 2)
            socket.cancel(with: .normalClosure, reason: nil)

            let refused = URLSessionManager().webSocketTask(with: try wsURL(server, "/ws/basic-auth/ada/lovelace"))
            refused.resume()
            do {
                try await refused.send(.string("no credential"))
                Issue.record("a 401 opened a socket")
            } catch CourierError.webSocketHandshakeFailed(let response, let reason) {
                #expect(response?.statusCode == 401)
                #expect(reason.contains("401"))
            }
        }
    }

    @Test func aRedirectDuringTheHandshakeIsAnError() async throws {
        try await TestServer.withRunning { server in
            let socket = URLSessionManager().webSocketTask(with: try wsURL(server, "/redirect-to?url=/ws/echo"))
            socket.resume()
            do {
                _ = try await socket.receive()
                Issue.record("a redirect was followed")
            } catch CourierError.webSocketHandshakeFailed(let response, let reason) {
                #expect(response?.statusCode == 302)
                #expect(reason.contains("redirect"))
            }
            try await eventually(within: 10) { socket.state == .completed }
        }
    }

    @Test(arguments: ["http", "socks5"])
    func theHandshakeGoesThroughTheConfiguredProxy(kind: String) async throws {
        try await TestServer.withRunning { server in
            if kind == "http" {
                try await TestProxyServer.withRunning { proxy in
                    try await echoThrough(proxy: "http://127.0.0.1:\(proxy.port)", server: server)
                    #expect(proxy.requestLines.contains { $0.hasPrefix("CONNECT 127.0.0.1:\(server.port)") }, "\(proxy.requestLines)")
                }
            } else {
                try await TestSOCKSProxyServer.withRunning { socks in
                    try await echoThrough(proxy: "socks5://127.0.0.1:\(socks.port)", server: server)
                    #expect(socks.requests.count == 1)
                }
            }
        }
    }

    private func echoThrough(proxy: String, server: TestServer) async throws {
        var configuration = SessionConfiguration()
        configuration.proxy = try EngineProxy(url: proxy)
        let socket = URLSessionManager(configuration: configuration).webSocketTask(with: try wsURL(server, "/ws/echo"))
        socket.resume()
        try await socket.send(.data(Data([1, 2, 3])))
        #expect(try await socket.receive() == .data(Data([1, 2, 3])))
        socket.cancel(with: .normalClosure, reason: nil)
    }

    /// Received binary messages are handed over without a copy: each must stay as it was while
    /// later messages are read (into the same buffers) and after the socket closed.
    @Test func receivedBinaryMessagesStayIntactWhileLaterOnesArrive() async throws {
        try await TestServer.withRunning { server in
            let socket = URLSessionManager().webSocketTask(with: try wsURL(server, "/ws/echo"))
            socket.resume()
            let sizes = [1, 32, 5_000, 65_536, 200_000, 7, 65_536]
            var sent: [Data] = []
            var kept: [Data] = []
            for (index, size) in sizes.enumerated() {
                let message = Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ index) })
                sent.append(message)
                try await socket.send(.data(message))
            }
            for _ in sizes {
                guard case .data(let data) = try await socket.receive() else {
                    Issue.record("expected a binary message")
                    return
                }
                kept.append(data)
            }
            socket.cancel(with: .normalClosure, reason: nil)
            for (index, message) in sent.enumerated() {
                #expect(kept[index] == message, "message \(index) (\(message.count) bytes)")
            }
            var mutated = kept[3]
            mutated[0] ^= 0xFF
            #expect(kept[3] == sent[3], "a copy changed by its holder leaves the received message alone")
        }
    }

    @Test func aWrongPinRefusesTheHandshake() async throws {
        try await TestServer.withRunning(.init(tls: .valid)) { server in
            var configuration = SessionConfiguration()
            configuration.tls.additionalTrustRootsDER = [try TestCertificateAuthority.shared.rootCertificateDER]
            let manager = URLSessionManager(configuration: configuration)
            let stranger = try Certificate(derEncoded: Data(try #require(try TestCertificateAuthority.shared.serverChain(.selfSigned).certificatesDER.first)))
            try manager.setSecurityPolicy(SecurityPolicy(pinningMode: .certificate, pinnedCertificates: [stranger]))
            let socket = manager.webSocketTask(with: try wsURL(server, "/ws/echo"))
            socket.resume()
            do {
                try await socket.send(.string("pinned"))
                Issue.record("a wrong pin was accepted")
            } catch CourierError.serverTrustRejected(_, let reason, _, _) {
                #expect(reason.contains("pinned"))
            }
        }
    }

    @Test func cancellingTheAwaitingTaskClosesWithGoingAway() async throws {
        try await TestServer.withRunning { server in
            let socket = URLSessionManager().webSocketTask(with: try wsURL(server, "/ws/echo"))
            socket.resume()
            try await socket.send(.string("open"))
            #expect(try await socket.receive() == .string("open"))
            let reader = Task { try await socket.receive() }
            try await Task.sleep(for: .milliseconds(100))
            reader.cancel()
            await #expect(throws: CourierError.self) { try await reader.value }
            try await eventually(within: 10) { server.webSocketClosesReceived == [1001] }
            try await eventually(within: 10) { socket.state == .completed }
            #expect(socket.closeCode == .goingAway)
        }
    }

    /// Messages that arrived before the server's close are still read after the task completed.
    @Test func messagesBeforeTheCloseAreReadAfterTheTaskCompleted() async throws {
        try await TestServer.withRunning { server in
            let frames = ["one", "two", "three"].flatMap { ServerFrame.bytes(.text, Array($0.utf8)) } + ServerFrame.bytes(.close, [0x03, 0xE8])
            var configuration = SessionConfiguration()
            configuration.webSocket.perMessageDeflate = false
            let socket = URLSessionManager(configuration: configuration)
                .webSocketTask(with: try wsURL(server, "/ws/raw?frames=\(ServerFrame.base64URL(frames))"))
            socket.resume()
            try await eventually(within: 10) { socket.state == .completed }
            var texts: [String] = []
            for try await message in socket.messages {
                if case .string(let text) = message { texts.append(text) }
            }
            #expect(texts == ["one", "two", "three"])
            #expect(socket.closeCode == .normalClosure)
        }
    }

    @Test func aServerCloseWithAnApplicationCodeFailsTheTaskNamingIt() async throws {
        try await TestServer.withRunning { server in
            let socket = URLSessionManager().webSocketTask(with: try wsURL(server, "/ws/close?code=4000&reason=gone"))
            socket.resume()
            do {
                for try await _ in socket.messages {}
                Issue.record("an application close ended the messages without an error")
            } catch CourierError.webSocketFailed(_, let error) {
                #expect(error == .closedByServer(code: 4000, reason: "gone"))
            }
            try await eventually(within: 10) { socket.state == .completed }
            #expect(socket.closeCodeValue == 4000)
            #expect(socket.closeReason == Data("gone".utf8))
            #expect(socket.error != nil)
        }
    }

    @Test func aMessageOverTheTasksLimitClosesWith1009() async throws {
        try await TestServer.withRunning { server in
            var configuration = SessionConfiguration()
            configuration.webSocket.perMessageDeflate = false
            let socket = URLSessionManager(configuration: configuration).webSocketTask(with: try wsURL(server, "/ws/echo"))
            socket.maximumMessageSize = 100
            socket.resume()
            try await socket.send(.data(Data(count: 1_000)))
            do {
                _ = try await socket.receive()
                Issue.record("a message over the limit was delivered")
            } catch CourierError.webSocketFailed(_, let error) {
                #expect(error.closeCode == 1009)
            }
            try await eventually(within: 10) { server.webSocketClosesReceived == [1009] }
        }
    }
}

extension WebSocketTaskTests {
    @Test func theHandshakeIsAClientSpanAndItsContextReachesTheServer() async throws {
        let tracer = W3CTestTracer()
        var configuration = SessionConfiguration()
        configuration.observability.tracer = tracer
        try await TestServer.withRunning { server in
            let socket = URLSessionManager(configuration: configuration).webSocketTask(with: try wsURL(server, "/ws/headers"))
            socket.resume()
            guard case .string(let text) = try await socket.receive() else {
                Issue.record("expected the headers as text")
                return
            }
            let headers = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: String]
            let span = try #require(tracer.finishedSpans.first { $0.operationName == "GET" })
            #expect(span.kind == .client)
            #expect(span.attributes.get("http.response.status_code") == .int64(101))
            #expect(headers?["Traceparent"] == "00-\(span.traceID)-\(span.spanID)-01")
            socket.cancel(with: .normalClosure, reason: nil)
        }
    }
}

/// Adds `X-Adapted` to every request it adapts.
private struct HeaderAdder: RequestInterceptor {
    func adapt(_ request: URLRequest, for task: SessionTask) async throws -> URLRequest {
        var adapted = request
        adapted.setValue("by the interceptor", forHTTPHeaderField: "X-Adapted")
        return adapted
    }
}
