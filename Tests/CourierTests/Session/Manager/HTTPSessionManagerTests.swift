import Courier
import CourierTestServer
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization
import Testing

@Suite("HTTPSessionManager")
struct HTTPSessionManagerTests {
    @Test func baseURLTable() throws {
        let manager = HTTPSessionManager(baseURL: URL(string: "http://h/v1"))
        #expect(manager.baseURL?.absoluteString == "http://h/v1/")
        func resolved(_ string: String) throws -> String? {
            try manager.makeRequest(method: "GET", urlString: string, parameters: nil, headers: nil).url?.absoluteString
        }
        #expect(try resolved("foo") == "http://h/v1/foo")
        #expect(try resolved("foo/") == "http://h/v1/foo/")
        #expect(try resolved("/foo") == "http://h/foo")
        #expect(try resolved("http://other/x") == "http://other/x")
        #expect(try resolved("?a=1") == "http://h/v1/?a=1")
        #expect(HTTPSessionManager(baseURL: URL(string: "http://h")).baseURL?.absoluteString == "http://h")
    }

    @Test func getWithParametersAsync() async throws {
        try await TestServer.withRunning { server in
            let manager = HTTPSessionManager(baseURL: server.baseURL)
            let (object, response) = try await manager.get("get", parameters: ["page": 1, "q": "a b"])
            #expect(response.statusCode == 200)
            let json = try #require(object as? JSONValue)
            #expect(json["args"]?["page"] == "1")
            #expect(json["args"]?["q"] == "a b")
        }
    }

    @Test func perRequestHeadersWinAndFormBodyIsSent() async throws {
        try await TestServer.withRunning { server in
            let manager = HTTPSessionManager(baseURL: server.baseURL)
            let (object, _) = try await manager.post("post", parameters: ["name": "ada"], headers: ["X-Extra": "1", "User-Agent": "mine"])
            let json = try #require(object as? JSONValue)
            #expect(json["form"]?["name"] == "ada")
            #expect(json["headers"]?["X-Extra"] == "1")
            #expect(json["headers"]?["User-Agent"] == "mine")
        }
    }

    @Test func blockShapeSuccessAndFailure() async throws {
        try await TestServer.withRunning { server in
            let manager = HTTPSessionManager(baseURL: server.baseURL)
            let outcome = Mutex<String?>(nil)
            let recorder = CompletionRecorder()
            manager.get("status/500", success: { _, _ in
                outcome.withLock { $0 = "success" }
                recorder.handler(nil, nil, nil)
            }, failure: { task, error in
                outcome.withLock { $0 = "failure \(task?.response?.statusCode ?? 0)" }
                recorder.handler(nil, nil, error)
            })
            await recorder.wait()
            #expect(outcome.withLock { $0 } == "failure 500")
        }
    }

    @Test func headAnd204GiveNilObjectAndSuccess() async throws {
        try await TestServer.withRunning { server in
            let manager = HTTPSessionManager(baseURL: server.baseURL)
            let (object, response) = try await manager.get("status/204")
            #expect(response.statusCode == 204)
            #expect(object == nil)
            let recorder = CompletionRecorder()
            manager.head("get", success: { _ in recorder.handler(nil, nil, nil) }, failure: { _, error in recorder.handler(nil, nil, error) })
            await recorder.wait()
            #expect(recorder.first?.error == nil)
        }
    }

    @Test func serializationErrorCallsFailureWithNilTask() async throws {
        let manager = HTTPSessionManager()
        let recorder = CompletionRecorder()
        let sawNilTask = Mutex(false)
        let task = manager.get("http://[bad", success: nil, failure: { task, error in
            sawNilTask.withLock { $0 = task == nil }
            recorder.handler(nil, nil, error)
        })
        #expect(task == nil)
        await recorder.wait()
        #expect(sawNilTask.withLock { $0 })
    }

    @Test func redirectsFollowAndPostBecomesGet() async throws {
        try await TestServer.withRunning { server in
            let manager = HTTPSessionManager(baseURL: server.baseURL)
            let (object, response) = try await manager.get("redirect/3")
            #expect(response.statusCode == 200)
            #expect(response.url?.path == "/get")
            #expect(object != nil)
            let to = server.baseURL.absoluteString + "/anything"
            let (posted, _) = try await manager.post("redirect-to?url=\(to)&status_code=302", parameters: ["k": "v"])
            let json = try #require(posted as? JSONValue)
            #expect(json["method"] == "GET")
            // 307 keeps the method and the body.
            let (kept, _) = try await manager.post("redirect-to?url=\(to)&status_code=307", parameters: ["k": "v"])
            let keptJSON = try #require(kept as? JSONValue)
            #expect(keptJSON["method"] == "POST")
            #expect(keptJSON["form"]?["k"] == "v")
        }
    }

    @Test func redirectLoopFailsWithTooManyRedirects() async throws {
        try await TestServer.withRunning { server in
            let manager = HTTPSessionManager(baseURL: server.baseURL)
            do {
                _ = try await manager.get("fault/redirect-loop")
                Issue.record("a redirect loop succeeded")
            } catch let error as CourierError {
                guard case .tooManyRedirects(_, let limit) = error else {
                    Issue.record("expected tooManyRedirects, got \(error)")
                    return
                }
                #expect(limit == 16)
            }
        }
    }

    @Test func redirectHookCanStopAndDeliverThe3xx() async throws {
        try await TestServer.withRunning { server in
            let manager = HTTPSessionManager(baseURL: server.baseURL)
            manager.responseSerializer = HTTPResponseSerializer()
            manager.setTaskWillPerformHTTPRedirectionBlock { _, _, _ in nil }
            do {
                _ = try await manager.get("redirect/1")
                Issue.record("a 302 passed the default 2xx validation")
            } catch let error as CourierError {
                guard case .unacceptableStatusCode(let response, _, _) = error else {
                    Issue.record("expected unacceptableStatusCode, got \(error)")
                    return
                }
                #expect(response.statusCode == 302)
            }
        }
    }

    @Test func basicAndDigestAuthViaCredential() async throws {
        try await TestServer.withRunning { server in
            let manager = HTTPSessionManager(baseURL: server.baseURL)
            manager.credential = URLCredential(user: "user", password: "pass", persistence: .none)
            let (basic, basicResponse) = try await manager.get("basic-auth/user/pass")
            #expect(basicResponse.statusCode == 200)
            #expect((basic as? JSONValue)?["authenticated"] == true)
            let (md5, _) = try await manager.get("digest-auth/auth/user/pass/MD5")
            #expect((md5 as? JSONValue)?["authenticated"] == true)
            let (sha, _) = try await manager.get("digest-auth/auth/user/pass/SHA-256")
            #expect((sha as? JSONValue)?["authenticated"] == true)
            manager.credential = URLCredential(user: "user", password: "wrong", persistence: .none)
            do {
                _ = try await manager.get("basic-auth/user/pass")
                Issue.record("a wrong password was accepted")
            } catch let error as CourierError {
                guard case .unacceptableStatusCode(let response, _, _) = error else {
                    Issue.record("expected 401, got \(error)")
                    return
                }
                #expect(response.statusCode == 401)
            }
        }
    }

    @Test func decodableAsync() async throws {
        struct Slideshow: Decodable, Sendable {
            struct Inner: Decodable, Sendable { let title: String }
            let slideshow: Inner
        }
        try await TestServer.withRunning { server in
            let manager = HTTPSessionManager(baseURL: server.baseURL)
            let result = try await manager.get("json", as: Slideshow.self)
            #expect(!result.value.slideshow.title.isEmpty)
        }
    }

    @Test func cancellingTheSwiftTaskCancelsTheRequest() async throws {
        try await TestServer.withRunning { server in
            let manager = HTTPSessionManager(baseURL: server.baseURL)
            let waiting = Task { try await manager.get("fault/no-response") }
            try await Task.sleep(for: .milliseconds(200))
            waiting.cancel()
            do {
                _ = try await waiting.value
                Issue.record("a cancelled request succeeded")
            } catch let error as CourierError {
                guard case .cancelled = error else {
                    Issue.record("expected cancelled, got \(error)")
                    return
                }
            }
            #expect(manager.tasks.isEmpty)
        }
    }
}
