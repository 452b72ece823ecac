import Courier
import CourierTestServer
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HTTPTypes
import Synchronization
import Testing

/// A per-call interceptor on the async shapes: the typed verbs, the `URLRequest` and
/// `HTTPRequest` entry points. Each adapts the request (the server sees what it added) and
/// retries (the server counts the attempts), chained after the manager's.
@Suite("Interceptors and retry (async verbs)")
struct InterceptorAsyncVerbTests {
    /// What `/retry/{key}` answers once it stops failing.
    struct Attempts: Decodable, Sendable {
        let attempts: Int
        let method: String
    }

    /// What `/bearer/{token}` answers to the right token.
    struct Token: Decodable, Sendable {
        let token: String
    }

    /// What `/headers` echoes.
    struct Headers: Decodable, Sendable {
        let headers: [String: String]
    }

    final class Refreshes: Sendable {
        let count = Mutex(0)
    }

    static let retry = RetryPolicy(exponentialBackoffScale: 0.01)

    /// A bearer token interceptor that starts with a rejected token: the first attempt is a
    /// 401, the refresh gives the right one, the replay is a 200. The server sees the header
    /// the interceptor adds (only the right one is answered 200).
    static func refreshing(to token: String, refreshed: (@Sendable () -> Void)? = nil) -> AuthenticationInterceptor {
        AuthenticationInterceptor(token: "stale") { _ in
            refreshed?()
            return token
        }
    }

    @Test func typedVerbsTakeAPerCallInterceptor() async throws {
        try await TestServer.withRunning { server in
            let manager = HTTPSessionManager(baseURL: server.baseURL)
            // Adapt and retry in one: the token is added, rejected, refreshed, replayed.
            let refreshes = Refreshes()
            let token = try await manager.get(
                "bearer/right", as: Token.self, interceptor: Self.refreshing(to: "right", refreshed: { refreshes.count.withLock { $0 += 1 } }))
            #expect(token.status == .ok)
            #expect(token.value.token == "right")
            #expect(refreshes.count.withLock { $0 } == 1)
            #expect(server.requestsReceived(forPath: "/bearer/right") == 2)

            // Retry: a 503 twice, then the value.
            let got = try await manager.get("retry/get?fail=2", as: Attempts.self, interceptor: Self.retry)
            #expect(got.value.attempts == 3)
            #expect(server.requestsReceived(forPath: "/retry/get") == 3)

            let put = try await manager.put("retry/put?fail=1", body: ["a": 1], as: Attempts.self, interceptor: Self.retry)
            #expect(put.value.attempts == 2)
            #expect(put.value.method == "PUT")

            let deleted = try await manager.delete("retry/delete?fail=1", as: Attempts.self, interceptor: Self.retry)
            #expect(deleted.value.attempts == 2)

            let viaRequest = try await manager.request("GET", "retry/request?fail=1", as: Attempts.self, interceptor: Self.retry)
            #expect(viaRequest.value.attempts == 2)

            let serialized = try await manager.get("retry/serialized?fail=1", serializer: StringResponseSerializer(), interceptor: Self.retry)
            #expect(try JSONValue(parsing: Data(serialized.value.utf8))["attempts"]?.intValue == 2, "\(serialized.value)")

            let head = try await manager.head("retry/head?fail=1", interceptor: Self.retry)
            #expect(head.status == .ok)
            #expect(server.requestsReceived(forPath: "/retry/head") == 2)

            let fetched = try await manager.fetch("retry/fetch?fail=1", as: Attempts.self, interceptor: Self.retry)
            #expect(fetched.value.attempts == 2)

            // A POST is not retried by the default policy, but it is adapted.
            let posted = try await manager.post(
                "bearer/posted", parameters: ["x": "1"], as: Token.self, interceptor: Self.refreshing(to: "posted"))
            #expect(posted.value.token == "posted")

            // The untyped async verb too.
            let (object, response) = try await manager.get("retry/untyped?fail=1", interceptor: Self.retry)
            #expect(response.statusCode == 200)
            #expect((object as? JSONValue)?["attempts"]?.intValue == 2)
        }
    }

    @Test func urlRequestAndHTTPRequestEntryPointsTakeAPerCallInterceptor() async throws {
        try await TestServer.withRunning { server in
            let manager = URLSessionManager()
            let decoded = try await manager.response(
                for: URLRequest(url: server.sessionURL("/retry/urlrequest?fail=1")), as: Attempts.self, interceptor: Self.retry)
            #expect(decoded.value.attempts == 2)

            let serialized = try await manager.data(
                for: URLRequest(url: server.sessionURL("/bearer/serializer")), serializer: JSONResponseSerializer(),
                interceptor: Self.refreshing(to: "serializer"))
            #expect(serialized.value == ["token": "serializer"])

            let authority = "127.0.0.1:\(server.port)"
            let (data, response) = try await manager.data(
                for: HTTPRequest(method: .get, scheme: "http", authority: authority, path: "/bearer/typed"),
                interceptor: Self.refreshing(to: "typed"))
            #expect(response.status == .ok)
            #expect(try JSONValue(parsing: data) == ["token": "typed"])
            #expect(server.requestsReceived(forPath: "/bearer/typed") == 2)

            var put = HTTPRequest(method: .put, scheme: "http", authority: authority, path: "/retry/typed-put?fail=2")
            put.headerFields[.contentType] = "text/plain"
            let attempts = try await manager.response(
                for: put, body: Data("hello".utf8), as: Attempts.self, interceptor: Self.retry)
            #expect(attempts.value.attempts == 3)
            #expect(attempts.value.method == "PUT")

            let raw = try await manager.response(
                for: HTTPRequest(method: .get, scheme: "http", authority: authority, path: "/retry/typed-raw?fail=1"),
                interceptor: Self.retry)
            #expect(try JSONValue(parsing: raw.value)["attempts"]?.intValue == 2)
        }
    }

    @Test func aPerCallInterceptorRunsAfterTheManagersAndDoesNotStay() async throws {
        try await TestServer.withRunning { server in
            let manager = HTTPSessionManager(baseURL: server.baseURL)
            manager.interceptor = HeaderInterceptor(name: "X-One", value: "manager")
            let both = try await manager.get(
                "headers", as: Headers.self,
                interceptor: Interceptor([HeaderInterceptor(name: "X-Two", value: "call"), HeaderInterceptor(name: "X-One", value: "call")]))
            #expect(both.value.headers["X-One"] == "call")
            #expect(both.value.headers["X-Two"] == "call")
            let managerOnly = try await manager.get("headers", as: Headers.self)
            #expect(managerOnly.value.headers["X-One"] == "manager")
            #expect(managerOnly.value.headers["X-Two"] == nil)
        }
    }

    @Test func transfersTakeAPerCallInterceptor() async throws {
        try await TestServer.withRunning { server in
            let manager = HTTPSessionManager(baseURL: server.baseURL)
            let destination = FileManager.default.temporaryDirectory.appendingPathComponent("courier-retry-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: destination) }
            let download = manager.download(
                URLRequest(url: server.sessionURL("/retry/transfer-download?fail=1")), to: destination, interceptor: Self.retry)
            #expect(try await download.value == destination)
            #expect(download.task.retryCount == 1)
            #expect(try JSONValue(parsing: Data(contentsOf: destination))["attempts"]?.intValue == 2)

            let viaString = try manager.download("bearer/downloaded", to: destination, interceptor: Self.refreshing(to: "downloaded"))
            #expect(try JSONValue(parsing: Data(contentsOf: try await viaString.value)) == ["token": "downloaded"])

            var put = URLRequest(url: server.sessionURL("/retry/transfer-upload?fail=1"))
            put.httpMethod = "PUT"
            let upload = manager.upload(Data("hello".utf8), with: put, interceptor: Self.retry)
            #expect(try JSONValue(parsing: try await upload.value)["attempts"]?.intValue == 2)

            let file = FileManager.default.temporaryDirectory.appendingPathComponent("courier-upload-\(UUID().uuidString)")
            try Data("from a file".utf8).write(to: file)
            defer { try? FileManager.default.removeItem(at: file) }
            let fromFile = try manager.upload(fileAt: file, to: "retry/transfer-file?fail=1", method: "PUT", interceptor: Self.retry)
            #expect(try JSONValue(parsing: try await fromFile.value)["attempts"]?.intValue == 2)

            let gathered = manager.transfer(for: URLRequest(url: server.sessionURL("/bearer/transfer")), interceptor: Self.refreshing(to: "transfer"))
            #expect(try JSONValue(parsing: try await gathered.value) == ["token": "transfer"])
            let viaPath = try manager.transfer("retry/transfer-get?fail=1", interceptor: Self.retry)
            #expect(try JSONValue(parsing: try await viaPath.value)["attempts"]?.intValue == 2)
        }
    }

    @Test func streamsTakeAPerCallInterceptor() async throws {
        try await TestServer.withRunning { server in
            let manager = HTTPSessionManager(baseURL: server.baseURL)
            let bearer = HeaderInterceptor(name: "Authorization", value: "Bearer streamed")
            // Adapted: the server sees the token.
            let (response, body) = try await manager.bytes(for: URLRequest(url: server.sessionURL("/bearer/streamed")), interceptor: bearer)
            #expect(response.statusCode == 200)
            var data = Data()
            for try await chunk in body { data.append(chunk) }
            #expect(try JSONValue(parsing: data) == ["token": "streamed"])

            // Retried while no head has arrived (a connection closed before any byte). A new
            // manager each time: on a reused connection the engine itself retries such a close once.
            let retry = RetryPolicy(exponentialBackoffScale: 0.01)
            let authority = "127.0.0.1:\(server.port)"
            let typed = try await URLSessionManager().stream(
                for: HTTPRequest(method: .get, scheme: "http", authority: authority, path: "/retry/stream-close?fail=1&mode=close"),
                interceptor: retry)
            #expect(typed.status == .ok)
            #expect(typed.body.task?.retryCount == 1)
            let uploaded = try await URLSessionManager().stream(
                for: HTTPRequest(method: .put, scheme: "http", authority: authority, path: "/retry/stream-put?fail=1&mode=close"),
                uploading: .data(Data("hello".utf8)), interceptor: retry)
            #expect(uploaded.status == .ok)
            #expect(uploaded.body.task?.retryCount == 1)
            let viaPath = try await HTTPSessionManager(baseURL: server.baseURL).stream("retry/stream-path?fail=1&mode=close", interceptor: retry)
            #expect(viaPath.status == .ok)
            #expect(viaPath.body.task?.retryCount == 1)
            #expect(server.requestsReceived(forPath: "/retry/stream-path") == 2)
        }
    }

    @Test func anAdaptErrorOnAnAsyncVerbThrowsThatError() async throws {
        try await TestServer.withRunning { server in
            let manager = HTTPSessionManager(baseURL: server.baseURL)
            await #expect(throws: AdaptFailure.self) {
                _ = try await manager.get("get", as: Headers.self, interceptor: ThrowingInterceptor())
            }
            #expect(server.requestsReceived(forPath: "/get") == 0)
        }
    }
}
