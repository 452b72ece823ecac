@testable import Courier
import CourierTestServer
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HTTPTypes
import Synchronization
import Testing

/// swift-http-types at the session's boundary: `HTTPRequest` in, `HTTPResponse` out, through
/// the same task machinery, and no `HTTPURLResponse` made on the way.
@Suite("HTTPRequest entry point")
struct HTTPTypesEntryPointTests {
    /// Records every task the manager completes, to count the responses made for it.
    private final class Completed: Sendable {
        let tasks = Mutex<[SessionTask]>([])
        func attach(to manager: URLSessionManager) {
            manager.setTaskDidCompleteBlock { task, _ in self.tasks.withLock { $0.append(task) } }
        }
        var responsesBuilt: [Int] { tasks.withLock { $0.map { $0.snapshot.withLock { $0.responsesBuilt } } } }
    }

    private func request(_ method: HTTPRequest.Method, _ server: TestServer, _ path: String, fields: HTTPFields = [:]) -> HTTPRequest {
        HTTPRequest(method: method, scheme: "http", authority: "127.0.0.1:\(server.port)", path: path, headerFields: fields)
    }

    private func json(_ data: Data) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    private func header(_ name: String, in echo: [String: Any]) -> String? {
        let headers = echo["headers"] as? [String: Any] ?? [:]
        return headers.first { $0.key.lowercased() == name.lowercased() }?.value as? String
    }

    @Test("method, fields and body reach the server; status and fields come back as HTTPResponse")
    func echoesMethodHeadersAndBody() async throws {
        try await TestServer.withRunning { server in
            let manager = URLSessionManager()
            let completed = Completed()
            completed.attach(to: manager)
            var fields = HTTPFields()
            fields[HTTPField.Name("X-Courier-Test")!] = "yes"
            fields[.contentType] = "text/plain"
            let body = Data("hello, http-types".utf8)
            let (data, response) = try await manager.data(for: request(.put, server, "/anything/x?q=1", fields: fields), body: body)
            #expect(response.status == .ok)
            #expect(response.headerFields[.contentType]?.hasPrefix("application/json") == true)
            #expect(response.headerFields[.contentLength] == "\(data.count)")
            let echo = try json(data)
            #expect(echo["method"] as? String == "PUT")
            #expect(echo["data"] as? String == "hello, http-types")
            #expect(header("X-Courier-Test", in: echo) == "yes")
            #expect(header("Content-Type", in: echo) == "text/plain")
            #expect((echo["args"] as? [String: Any])?["q"] as? String == "1")
            #expect(completed.responsesBuilt == [0])
        }
    }

    @Test("the response's fields are made on the first read, once, with every field in arrival order")
    func responseFieldsAreMadeOnFirstReadOnce() async throws {
        try await TestServer.withRunning { server in
            let manager = URLSessionManager()
            let result = try await manager.response(
                for: request(.get, server, "/response-headers?X-Courier=one&X-Courier=two&X-Other=3"))
            // The status alone makes no fields.
            #expect(result.status.code == 200)
            #expect(result.status.reasonPhrase == "OK")
            #expect(result.head.timesBuilt.load(ordering: .relaxed) == 0)
            // The first read makes them: the same values a response made at once would hold.
            let fields = result.headerFields
            #expect(result.head.timesBuilt.load(ordering: .relaxed) == 1)
            #expect(fields[values: HTTPField.Name("X-Courier")!] == ["one", "two"])
            #expect(fields[HTTPField.Name("X-Other")!] == "3")
            #expect(fields[.contentLength] == "\(result.value.count)")
            // Later reads (and copies of the result) share them.
            let copy = result
            #expect(copy.response.headerFields == fields)
            #expect(result.response.status == result.status)
            #expect(result.head.timesBuilt.load(ordering: .relaxed) == 1)
            // A response set by the caller replaces the head.
            var edited = result
            edited.response = HTTPResponse(status: .created)
            #expect(edited.status == .created)
            #expect(edited.headerFields.isEmpty)
            #expect(result.status.code == 200)
        }
    }

    @Test("redirects are followed and a 401 is answered with the session credential, with no HTTPURLResponse made")
    func redirectsAndAuthentication() async throws {
        try await TestServer.withRunning { server in
            let manager = URLSessionManager()
            let completed = Completed()
            completed.attach(to: manager)
            manager.credential = URLCredential(user: "user", password: "pass", persistence: .forSession)

            let redirected = try await manager.response(for: request(.get, server, "/redirect/2"))
            #expect(redirected.status == .ok)
            #expect(redirected.url.path == "/get")
            #expect(redirected.metrics != nil)

            let authenticated = try await manager.response(for: request(.get, server, "/basic-auth/user/pass"))
            #expect(authenticated.status.code == 200)
            #expect(try json(authenticated.value)["authenticated"] as? Bool == true)

            // Both at once: a redirect to a challenge.
            let both = try await manager.data(
                for: request(.get, server, "/redirect-to?url=%2Fbasic-auth%2Fuser%2Fpass"))
            #expect(both.1.status == .ok)

            // Any status is returned, not thrown.
            let missing = try await manager.data(for: request(.get, server, "/status/404"))
            #expect(missing.1.status == .notFound)

            #expect(completed.responsesBuilt == [0, 0, 0, 0])
        }
    }

    @Test("a request without scheme or authority is a requestSerializationFailed error")
    func relativeRequestFails() async throws {
        let manager = URLSessionManager()
        let relative = HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/get")
        await #expect(throws: CourierError.self) { _ = try await manager.data(for: relative) }
    }

    @Test("typed decoding on HTTPResponse metadata makes no HTTPURLResponse; failures are the serializer's errors")
    func typedDecoding() async throws {
        struct Echo: Decodable, Sendable { let url: String }
        struct Slideshow: Decodable, Sendable {
            struct Inner: Decodable, Sendable { let title: String }
            let slideshow: Inner
        }
        try await TestServer.withRunning { server in
            let manager = HTTPSessionManager(baseURL: server.baseURL)
            let completed = Completed()
            completed.attach(to: manager)
            let slideshow = try await manager.fetch("json", as: Slideshow.self)
            #expect(slideshow.status == .ok)
            #expect(!slideshow.value.slideshow.title.isEmpty)
            let echo = try await manager.response(for: request(.get, server, "/get"), as: Echo.self)
            #expect(echo.value.url.hasSuffix("/get"))
            #expect(completed.responsesBuilt == [0, 0])

            // `get(_:as:)` is the same typed shape: HTTPResponse metadata, no HTTPURLResponse.
            let viaGet = try await manager.get("json", as: Slideshow.self)
            #expect(viaGet.status == .ok)
            #expect(viaGet.value.slideshow.title == slideshow.value.slideshow.title)
            #expect(completed.responsesBuilt == [0, 0, 0])

            do {
                _ = try await manager.fetch("status/404", method: "GET", as: Echo.self)
                Issue.record("a 404 decoded")
            } catch let error as CourierError {
                guard case .unacceptableStatusCode(let response, _, _) = error else {
                    Issue.record("unexpected \(error)")
                    return
                }
                #expect(response.statusCode == 404)
            }
        }
    }

    @Test("the README's swift-http-types example")
    func readmeHTTPTypesExample() async throws {
        struct Slideshow: Decodable, Sendable {
            struct Inner: Decodable, Sendable { let title: String }
            let slideshow: Inner
        }
        try await TestServer.withRunning { server in
            let authority = "127.0.0.1:\(server.port)"
            // README begins
            let manager = HTTPSessionManager(baseURL: URL(string: "http://\(authority)"))
            let request = HTTPRequest(method: .post, scheme: "http", authority: authority, path: "/anything")
            let (data, response) = try await manager.data(for: request, body: Data("hi".utf8))
            print(response.status.code, response.headerFields[.contentType] ?? "-", data.count)

            let slideshow = try await manager.fetch("json", as: Slideshow.self)
            print(slideshow.status, slideshow.value.slideshow.title, slideshow.metrics.map { "\($0)" } ?? "")
            // README ends
            #expect(response.status == .ok)
            #expect(slideshow.status == .ok)
        }
    }

    @Test("a typed call's failure carries the task's own HTTPURLResponse, made once")
    func aFailureCarriesTheTasksResponse() async throws {
        try await TestServer.withRunning { server in
            let manager = URLSessionManager()
            let completed = Completed()
            completed.attach(to: manager)
            do {
                _ = try await manager.response(for: URLRequest(url: server.sessionURL("/status/404")), serializer: HTTPResponseSerializer())
                Issue.record("a 404 passed validation")
            } catch let error as CourierError {
                let task = try #require(completed.tasks.withLock { $0.first })
                let response = try #require(error.response)
                #expect(response.statusCode == 404)
                #expect(response === task.response, "the error's response is another object than task.response")
            }
            #expect(completed.responsesBuilt == [1])
        }
    }
}
