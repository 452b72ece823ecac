@testable import Courier
import CourierTestServer
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// The task's `HTTPURLResponse` is made from the engine's response head on first use, once:
/// same values as the eager path gave, the same object for every reader, and none for the
/// hops (redirects, answered challenges) nobody looks at.
@Suite("lazy HTTPURLResponse")
struct LazyResponseTests {
    private func built(_ task: SessionTask) -> Int { task.snapshot.withLock { $0.responsesBuilt } }

    @Test("the lazily made response has the eager path's status, URL, fields and expected length, and is one object")
    func lazyResponseMatchesEager() async throws {
        try await TestServer.withRunning { server in
            let manager = URLSessionManager()
            manager.responseSerializer = HTTPResponseSerializer()
            let url = server.sessionURL("/response-headers?X-One=1&X-Multi=a&X-Multi=b")
            let recorder = CompletionRecorder()
            let task = manager.dataTask(with: URLRequest(url: url), completionHandler: recorder.handler)
            task.resume()
            await recorder.wait()
            let response = try #require(task.response)
            #expect(task.response === response)
            #expect(recorder.first?.response === response)
            #expect(built(task) == 1)

            let (head, responseURL) = task.snapshot.withLock { ($0.head, $0.responseURL) }
            let finalHead = try #require(head)
            let finalURL = try #require(responseURL)
            let eager = try #require(ResponseHeadBridge.makeResponse(finalHead, url: finalURL))
            #expect(response.statusCode == eager.statusCode)
            #expect(response.statusCode == 200)
            #expect(response.url == eager.url)
            #expect(response.url == url)
            #expect(response.expectedContentLength == eager.expectedContentLength)
            #expect(response.expectedContentLength == task.countOfBytesExpectedToReceive)
            #expect(response.expectedContentLength > 0)
            let fields = response.allHeaderFields as? [String: String]
            #expect(fields == eager.allHeaderFields as? [String: String])
            #expect(response.value(forHTTPHeaderField: "X-One") == "1")
            #expect(response.value(forHTTPHeaderField: "X-Multi") == "a, b")
            for (name, _) in finalHead.headers {
                #expect(response.value(forHTTPHeaderField: name) != nil, "\(name)")
            }
            #expect(built(task) == 1)
        }
    }

    @Test("a redirect and an answered 401 on the way make no HTTPURLResponse; the final one is made once")
    func hopsMakeNoResponse() async throws {
        try await TestServer.withRunning { server in
            let manager = URLSessionManager()
            manager.credential = URLCredential(user: "user", password: "pass", persistence: .forSession)
            var components = URLComponents(url: server.sessionURL("/redirect-to"), resolvingAgainstBaseURL: false)
            components?.queryItems = [URLQueryItem(name: "url", value: "/basic-auth/user/pass")]
            let recorder = CompletionRecorder()
            let task = manager.dataTask(with: URLRequest(url: try #require(components?.url)), completionHandler: recorder.handler)
            task.resume()
            await recorder.wait()
            #expect(recorder.first?.response?.statusCode == 200)
            #expect(recorder.first?.response?.url?.path == "/basic-auth/user/pass")
            #expect(built(task) == 1)
            _ = task.response
            _ = task.response
            #expect(built(task) == 1)
        }
    }

    @Test("the did-receive-response block, the completion and task.response get the same object")
    func hookSharesTheTasksResponse() async throws {
        try await TestServer.withRunning { server in
            let manager = URLSessionManager()
            let seen = ResponseBox()
            manager.setDataTaskDidReceiveResponseBlock { _, response in
                seen.set(response)
                return .allow
            }
            let recorder = CompletionRecorder()
            let task = manager.dataTask(with: URLRequest(url: server.sessionURL("/get")), completionHandler: recorder.handler)
            task.resume()
            await recorder.wait()
            let response = try #require(task.response)
            #expect(seen.get() === response)
            #expect(recorder.first?.response === response)
            #expect(built(task) == 1)
        }
    }
}

/// One response, handed from a hook to the test.
final class ResponseBox: @unchecked Sendable {
    // @unchecked: guarded by `lock`.
    private let lock = NSLock()
    private var response: HTTPURLResponse?
    func set(_ value: HTTPURLResponse) { lock.withLock { response = value } }
    func get() -> HTTPURLResponse? { lock.withLock { response } }
}
