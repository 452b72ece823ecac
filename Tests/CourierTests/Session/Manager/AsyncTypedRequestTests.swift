@testable import Courier
import CourierTestServer
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HTTPTypes
import Synchronization
import Testing

/// The typed async verbs: every method returns swift-http-types metadata with a decoded value,
/// makes no `HTTPURLResponse` for a valid response, and takes a per-call serializer without
/// touching the manager's.
@Suite("async typed requests")
struct AsyncTypedRequestTests {
    /// What `/anything` echoes.
    struct Echo: Decodable, Sendable, Equatable {
        let method: String
        let url: String
        let data: String
        let headers: [String: String]
        let form: [String: String]?

        func header(_ name: String) -> String? {
            headers.first { $0.key.lowercased() == name.lowercased() }?.value
        }
    }

    /// Records every task the manager completes, to count the responses made for it.
    final class Completed: Sendable {
        let tasks = Mutex<[SessionTask]>([])
        init(_ manager: URLSessionManager) {
            manager.setTaskDidCompleteBlock { task, _ in self.tasks.withLock { $0.append(task) } }
        }
        var responsesBuilt: [Int] { tasks.withLock { $0.map { $0.snapshot.withLock { $0.responsesBuilt } } } }
    }

    @Test("get/post/put/patch/delete/request(as:) send their method and return HTTPResponse metadata without an HTTPURLResponse")
    func everyVerbIsTypedWithoutFoundationResponses() async throws {
        try await TestServer.withRunning { server in
            let manager = HTTPSessionManager(baseURL: server.baseURL)
            let completed = Completed(manager)
            let get = try await manager.get("anything/g", parameters: ["q": "1"], as: Echo.self)
            let post = try await manager.post("anything/p", parameters: ["k": "v"], as: Echo.self)
            let put = try await manager.put("anything/u", parameters: ["k": "v"], as: Echo.self)
            let patch = try await manager.patch("anything/a", parameters: ["k": "v"], as: Echo.self)
            let delete = try await manager.delete("anything/d", parameters: ["q": "2"], as: Echo.self)
            let options = try await manager.request("OPTIONS", "anything/o", as: Echo.self)
            #expect([get, post, put, patch, delete, options].map(\.value.method) == ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"])
            #expect([get, post, put, patch, delete, options].allSatisfy { $0.status == .ok && $0.metrics != nil })
            #expect(get.value.url.hasSuffix("/anything/g?q=1"))
            #expect(delete.value.url.hasSuffix("/anything/d?q=2"))
            #expect(post.value.form?["k"] == "v")
            #expect(put.value.form?["k"] == "v")
            #expect(get.headerFields[.contentType]?.hasPrefix("application/json") == true)
            #expect(get.url.path == "/anything/g")

            let head = try await manager.head("get")
            #expect(head.status == .ok)
            #expect(head.headerFields[.contentLength].flatMap { Int($0) } ?? 0 > 0)

            #expect(completed.responsesBuilt == [0, 0, 0, 0, 0, 0, 0])
            #expect(manager.tasks.isEmpty)
        }
    }

    @Test("an Encodable body is sent as the encoder's exact bytes: its key order, its formatting, top-level arrays")
    func encodableBodiesAreTheEncodersBytes() async throws {
        struct Item: Codable, Sendable { let zebra: Int; let apple: String; let mango: Bool }
        /// An encoder that writes keys in declaration order, as some users' encoders do.
        struct DeclarationOrderEncoder: RequestBodyEncoder {
            var contentType: String { "application/vnd.courier+json" }
            func encode<T: Encodable>(_ value: T) throws -> Data {
                Data(#"{"zebra":1,"apple":"a","mango":true}"#.utf8)
            }
        }
        try await TestServer.withRunning { server in
            let manager = HTTPSessionManager(baseURL: server.baseURL)
            let item = Item(zebra: 1, apple: "a", mango: true)

            let ordered = try await manager.post("anything", body: item, encoder: DeclarationOrderEncoder(), as: Echo.self)
            #expect(ordered.value.data == #"{"zebra":1,"apple":"a","mango":true}"#)
            #expect(ordered.value.header("Content-Type") == "application/vnd.courier+json")

            let sortedEncoder = JSONEncoder()
            sortedEncoder.outputFormatting = [.sortedKeys, .prettyPrinted]
            let expected = String(decoding: try sortedEncoder.encode([item, item]), as: UTF8.self)
            #expect(expected.hasPrefix("["))
            let array = try await manager.put("anything", body: [item, item], encoder: sortedEncoder, as: Echo.self)
            #expect(array.value.method == "PUT")
            #expect(array.value.data == expected)
            #expect(array.value.header("Content-Type") == "application/json")

            // The default encoder, a caller's Content-Type, PATCH.
            let patched = try await manager.patch(
                "anything", body: ["only": 1], headers: ["Content-Type": "application/merge-patch+json"], as: Echo.self)
            #expect(patched.value.data == #"{"only":1}"#)
            #expect(patched.value.header("Content-Type") == "application/merge-patch+json")

            // Another format.
            let plistEncoder = PropertyListEncoder()
            plistEncoder.outputFormat = .xml
            let plist = try await manager.post("anything", body: item, encoder: plistEncoder, as: Echo.self)
            #expect(plist.value.header("Content-Type") == "application/x-plist")
            #expect(plist.value.data.contains("<key>zebra</key>"))
        }
    }

    @Test("a body the encoder refuses fails with bodyEncodingFailed and nothing is sent")
    func encodingFailureSendsNothing() async throws {
        try await TestServer.withRunning { server in
            let manager = HTTPSessionManager(baseURL: server.baseURL)
            do {
                _ = try await manager.post("anything/never", body: [Double.nan], as: Echo.self)
                Issue.record("a NaN body was sent")
            } catch CourierError.requestSerializationFailed(.bodyEncodingFailed(let reason)) {
                #expect(!reason.isEmpty)
            }
            #expect(server.requestsReceived(forPath: "/anything/never") == 0)
        }
    }

    @Test("a serializer passed to the call is used for that call only; the manager's stays")
    func perCallSerializer() async throws {
        try await TestServer.withRunning { server in
            let manager = HTTPSessionManager(baseURL: server.baseURL)
            let html = try await manager.get("html", serializer: StringResponseSerializer())
            #expect(html.status == .ok)
            #expect(html.value.contains("<html"))
            let raw = try await manager.post("anything", body: ["a": 1], serializer: HTTPResponseSerializer())
            #expect(raw.value?.isEmpty == false)
            #expect(manager.responseSerializer is JSONResponseSerializer)
            // The manager's serializer still parses the untyped shape as JSON.
            let (object, _) = try await manager.get("get")
            #expect(object is JSONValue)
        }
    }

    @Test("a URLRequest of your own: response(for:as:) and response(for:serializer:) on a plain URLSessionManager")
    func urlRequestInput() async throws {
        try await TestServer.withRunning { server in
            let manager = URLSessionManager()
            let completed = Completed(manager)
            var request = URLRequest(url: server.sessionURL("/anything/mine"))
            request.httpMethod = "PUT"
            request.httpBody = Data("body".utf8)
            let echo = try await manager.response(for: request, as: Echo.self)
            #expect(echo.value.method == "PUT")
            #expect(echo.value.data == "body")
            #expect(echo.status == .ok)
            let text = try await manager.response(for: URLRequest(url: server.sessionURL("/html")), serializer: StringResponseSerializer())
            #expect(text.value.contains("<html"))
            #expect(completed.responsesBuilt.first == 0)
        }
    }

    @Test("typed failures are the serializer's errors: a 404 is unacceptableStatusCode, a wrong shape is a decoding failure")
    func typedFailures() async throws {
        struct Other: Decodable, Sendable { let missing: Int }
        try await TestServer.withRunning { server in
            let manager = HTTPSessionManager(baseURL: server.baseURL)
            do {
                _ = try await manager.delete("status/404", as: Echo.self)
                Issue.record("a 404 decoded")
            } catch CourierError.unacceptableStatusCode(let response, _, _) {
                #expect(response.statusCode == 404)
            }
            do {
                _ = try await manager.get("get", as: Other.self)
                Issue.record("a wrong shape decoded")
            } catch CourierError.responseSerializationFailed {
            }
            do {
                _ = try await manager.head("status/500")
                Issue.record("a 500 HEAD succeeded")
            } catch CourierError.unacceptableStatusCode(let response, _, _) {
                #expect(response.statusCode == 500)
            }
        }
    }
}
