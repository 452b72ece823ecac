import Courier
import CourierTestServer
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization
import Testing

/// Authentication through the session against real servers: credentials stay with their
/// origin, Digest is chosen over Basic and never downgraded, stale nonces are retried once,
/// `nc` counts per nonce across requests, and attempts are bounded.
@Suite("session authentication")
struct SessionAuthenticationTests {
    /// Runs one data task and returns what its completion delivered.
    private func run(_ manager: URLSessionManager, _ request: URLRequest) async -> CompletionRecorder.Call? {
        let recorder = CompletionRecorder()
        manager.dataTask(with: request, completionHandler: recorder.handler).resume()
        await recorder.wait()
        return recorder.first
    }

    private func request(_ url: URL) -> URLRequest { URLRequest(url: url) }

    /// `server`'s `/redirect-to` pointing at `target`.
    private func redirect(from server: TestServer, to target: URL, status: Int = 302) -> URL {
        var components = URLComponents(url: server.sessionURL("/redirect-to"), resolvingAgainstBaseURL: false)
        components?.queryItems = [
            URLQueryItem(name: "url", value: target.absoluteString), URLQueryItem(name: "status_code", value: "\(status)"),
        ]
        guard let url = components?.url else { preconditionFailure("bad redirect URL") }
        return url
    }

    @Test("the session credential does not answer a 401 from another origin reached by redirect")
    func crossOriginChallengeNotAnswered() async throws {
        try await TestServer.withRunning { origin in
            try await TestServer.withRunning { other in
                let manager = URLSessionManager()
                manager.credential = URLCredential(user: "user", password: "pass", persistence: .forSession)
                // Same origin: answered.
                let same = await run(manager, request(redirect(from: origin, to: origin.sessionURL("/basic-auth/user/pass"))))
                #expect(same?.response?.statusCode == 200)
                // Another origin (another port): the 401 is the result, no password sent.
                let cross = await run(manager, request(redirect(from: origin, to: other.sessionURL("/basic-auth/user/pass"))))
                #expect(cross?.response?.statusCode == 401)
                #expect(cross?.response?.url?.port == other.port)
                // Digest across origins: not answered either.
                let digest = await run(
                    manager, request(redirect(from: origin, to: other.sessionURL("/digest-auth/auth/user/pass/SHA-256"))))
                #expect(digest?.response?.statusCode == 401)
            }
        }
    }

    @Test("a challenge block may still answer a 401 from another origin with its own credential")
    func challengeBlockDecidesAcrossOrigins() async throws {
        try await TestServer.withRunning { origin in
            try await TestServer.withRunning { other in
                let manager = URLSessionManager()
                manager.credential = URLCredential(user: "user", password: "pass", persistence: .forSession)
                let port = other.port
                manager.setTaskDidReceiveAuthenticationChallengeBlock { _, challenge in
                    if challenge.failureResponse.url?.port == port {
                        return .useCredential(URLCredential(user: "other", password: "secret", persistence: .none))
                    }
                    return .performDefaultHandling
                }
                let call = await run(manager, request(redirect(from: origin, to: other.sessionURL("/basic-auth/other/secret"))))
                #expect(call?.response?.statusCode == 200)
            }
        }
    }

    @Test("Authorization, Proxy-Authorization and Cookie set on the request are dropped on a cross-origin redirect")
    func sensitiveHeadersDroppedAcrossOrigins() async throws {
        try await TestServer.withRunning { origin in
            try await TestServer.withRunning { other in
                let manager = URLSessionManager()
                for status in [302, 307] {
                    var request = request(redirect(from: origin, to: other.sessionURL("/headers"), status: status))
                    request.setValue("Basic dXNlcjpwYXNz", forHTTPHeaderField: "Authorization")
                    request.setValue("Basic cHJveHk6c2VjcmV0", forHTTPHeaderField: "Proxy-Authorization")
                    request.setValue("session=1", forHTTPHeaderField: "Cookie")
                    request.setValue("kept", forHTTPHeaderField: "X-Other")
                    let call = await run(manager, request)
                    let headers = (call?.object as? JSONValue)?["headers"]
                    #expect(call?.response?.statusCode == 200)
                    #expect(headers?["X-Other"] == "kept")
                    #expect(headers?["Authorization"] == nil, "status \(status)")
                    #expect(headers?["Proxy-Authorization"] == nil, "status \(status)")
                    #expect(headers?["Cookie"] == nil, "status \(status)")
                }
                // Same origin: kept.
                var same = request(redirect(from: origin, to: origin.sessionURL("/headers")))
                same.setValue("Basic cHJveHk6c2VjcmV0", forHTTPHeaderField: "Proxy-Authorization")
                let call = await run(manager, same)
                #expect((call?.object as? JSONValue)?["headers"]?["Proxy-Authorization"] == "Basic cHJveHk6c2VjcmV0")
            }
        }
    }

    @Test("of Basic, Digest MD5 and Digest SHA-256 offered (in separate fields or one), SHA-256 is answered")
    func strongestChallengeChosen() async throws {
        try await TestServer.withRunning { server in
            let manager = URLSessionManager()
            manager.credential = URLCredential(user: "user", password: "pass", persistence: .forSession)
            for layout in ["fields", "inline"] {
                let url = server.sessionURL("/digest-auth/auth/user/pass/SHA-256?offer=basic,md5&layout=\(layout)")
                let call = await run(manager, request(url))
                #expect(call?.response?.statusCode == 200, "layout \(layout)")
                #expect((call?.object as? JSONValue)?["authenticated"] == true)
            }
        }
    }

    @Test("a 401 with stale=true is answered once more with the new nonce")
    func staleNonceRetried() async throws {
        try await TestServer.withRunning { server in
            let manager = URLSessionManager()
            manager.credential = URLCredential(user: "user", password: "pass", persistence: .forSession)
            let call = await run(manager, request(server.sessionURL("/digest-auth/auth/user/pass/MD5?stale_nonce=true")))
            #expect(call?.response?.statusCode == 200)
            #expect((call?.object as? JSONValue)?["authenticated"] == true)
        }
    }

    @Test("nc counts per nonce across requests: 00000001, 00000002, 00000003")
    func nonceCountAcrossRequests() async throws {
        try await TestServer.withRunning { server in
            let manager = URLSessionManager()
            manager.credential = URLCredential(user: "user", password: "pass", persistence: .forSession)
            let url = server.sessionURL("/digest-auth/auth/user/pass/SHA-256")
            var counts: [String?] = []
            for _ in 0..<3 {
                let call = await run(manager, request(url))
                #expect(call?.response?.statusCode == 200)
                counts.append(call?.response?.value(forHTTPHeaderField: "X-Digest-Nc"))
            }
            #expect(counts == ["00000001", "00000002", "00000003"])
        }
    }

    @Test("credentialSchemes = .digest: a server offering only Basic gets no answer; Digest is still answered")
    func digestOnlyNeverDowngrades() async throws {
        try await TestServer.withRunning { server in
            let manager = HTTPSessionManager(baseURL: server.baseURL)
            manager.credential = URLCredential(user: "user", password: "pass", persistence: .forSession)
            manager.credentialSchemes = .digest
            let basic = await run(manager, request(server.sessionURL("/basic-auth/user/pass")))
            #expect(basic?.response?.statusCode == 401)
            let (digest, response) = try await manager.get("digest-auth/auth/user/pass/MD5?offer=basic")
            #expect(response.statusCode == 200)
            #expect((digest as? JSONValue)?["authenticated"] == true)
        }
    }

    @Test("concurrent requests sharing a remembered nonce each send their own nc, and all succeed")
    func concurrentNonceCounts() async throws {
        try await TestServer.withRunning { server in
            let manager = URLSessionManager()
            manager.credential = URLCredential(user: "user", password: "pass", persistence: .forSession)
            let url = server.sessionURL("/digest-auth/auth/user/pass/SHA-256")
            let first = await run(manager, request(url))
            #expect(first?.response?.statusCode == 200)
            let counts = await withTaskGroup(of: String?.self) { group in
                for _ in 0..<8 {
                    group.addTask {
                        let call = await run(manager, request(url))
                        #expect(call?.response?.statusCode == 200)
                        return call?.response?.value(forHTTPHeaderField: "X-Digest-Nc")
                    }
                }
                var all: [String?] = []
                for await count in group { all.append(count) }
                return all
            }
            #expect(Set(counts.compactMap { $0 }).count == 8)
        }
    }

    @Test("a challenge block that always answers with a wrong credential ends with the 401, not a loop")
    func attemptsBounded() async throws {
        try await TestServer.withRunning { server in
            let manager = URLSessionManager()
            let calls = Mutex(0)
            manager.setTaskDidReceiveAuthenticationChallengeBlock { _, _ in
                let count = calls.withLock { count in
                    count += 1
                    return count
                }
                if count > 50 { return .cancel }  // the hang bound of the old, unbounded behaviour
                return .useCredential(URLCredential(user: "user", password: "wrong", persistence: .none))
            }
            let call = await run(manager, request(server.sessionURL("/basic-auth/user/pass")))
            #expect(call?.response?.statusCode == 401)
            #expect(calls.withLock { $0 } <= 5)
        }
    }
}
