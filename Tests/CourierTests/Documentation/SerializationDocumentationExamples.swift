import Courier
import CourierTestServer
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// The examples of the "Serialization" article, run against the in-process test server.
@Suite("Documentation: Serialization")
struct SerializationDocumentationExamples {
    struct Posted: Decodable, Sendable { let form: [String: String] }

    @Test("query strings and form bodies")
    func queryStrings() async throws {
        // AFQueryStringFromParameters: keys sorted, nested values in brackets, arrays with [].
        let query = queryString(from: ["user": ["name": "Ada", "tags": ["x", "y"]], "page": 1])
        print(query)   // page=1&user%5Bname%5D=Ada&user%5Btags%5D%5B%5D=x&user%5Btags%5D%5B%5D=y
        print(percentEscaped("a b&c=d/e?"))   // a%20b%26c%3Dd/e?

        #expect(query == "page=1&user%5Bname%5D=Ada&user%5Btags%5D%5B%5D=x&user%5Btags%5D%5B%5D=y")
        #expect(percentEscaped("a b&c=d/e?") == "a%20b%26c%3Dd/e?")
    }

    @Test("request serializers: form, JSON, headers")
    func requestSerializers() async throws {
        try await TestServer.withRunning { server in
            let manager = HTTPSessionManager(baseURL: server.baseURL)

            // The default: parameters in the query for GET, HEAD and DELETE, a form body otherwise.
            let form = HTTPRequestSerializer()
            form.setValue("docs", forHTTPHeaderField: "X-Client")
            form.setAuthorizationHeader(username: "ada", password: "secret")
            form.timeoutInterval = 20
            let request = try form.request(method: "POST", urlString: server.baseURL.absoluteString + "/post",
                                           parameters: ["name": "Ada", "born": 1815])
            print(String(decoding: request.httpBody ?? Data(), as: UTF8.self))   // born=1815&name=Ada

            // JSON bodies: set the manager's request serializer once.
            manager.requestSerializer = JSONRequestSerializer()
            let (object, _) = try await manager.post("post", parameters: ["name": "Ada", "languages": ["Swift"]])
            print((object as? JSONValue)?["json"]?["name"] ?? "-")              // "Ada"

            #expect(request.value(forHTTPHeaderField: "Content-Type") == "application/x-www-form-urlencoded")
            #expect(request.value(forHTTPHeaderField: "Authorization") == "Basic YWRhOnNlY3JldA==")
            #expect(request.timeoutInterval == 20)
            #expect(String(decoding: request.httpBody ?? Data(), as: UTF8.self) == "born=1815&name=Ada")
            #expect((object as? JSONValue)?["json"]?["languages"]?[0] == "Swift")
        }
    }

    @Test("response serializers and validation")
    func responseSerializers() async throws {
        try await TestServer.withRunning { server in
            let manager = HTTPSessionManager(baseURL: server.baseURL)

            // JSONResponseSerializer (the default) accepts 2xx and JSON content types.
            let (object, _) = try await manager.get("json")
            print((object as? JSONValue)?["slideshow"]?["title"]?.stringValue ?? "-")   // Sample Slide Show

            // A 404, or HTML where JSON was expected, fails with AFNetworking's message.
            do {
                _ = try await manager.get("html")
            } catch {
                print(error)   // Request failed: unacceptable content-type: text/html
            }

            // Any status and content type, the body as Data.
            let plain = HTTPResponseSerializer()
            plain.acceptableStatusCodes = IndexSet(200..<500)
            plain.acceptableContentTypes = nil
            let page = try await manager.get("status/418", serializer: plain)
            print(page.status.code)   // 418

            // Several serializers in turn: the first that accepts the response wins.
            manager.responseSerializer = CompoundResponseSerializer([JSONResponseSerializer(), StringResponseSerializer()])
            let (html, _) = try await manager.get("html")
            print((html as? String)?.prefix(15) ?? "-")   // <!DOCTYPE html>

            // Decodable, with a decoder of your own.
            let typed = try await manager.post("post", parameters: ["name": "Ada"],
                                               serializer: DecodableResponseSerializer(Posted.self))
            print(typed.value?.form["name"] ?? "-")   // Ada

            #expect((object as? JSONValue)?["slideshow"]?["title"] == "Sample Slide Show")
            await #expect(throws: CourierError.self) { _ = try await HTTPSessionManager(baseURL: server.baseURL).get("html") }
            #expect(page.status.code == 418)
            #expect((html as? String)?.contains("<html") == true)
        }
    }

    @Test("multipart uploads, both shapes")
    func multipart() async throws {
        try await TestServer.withRunning { server in
            let manager = HTTPSessionManager(baseURL: server.baseURL)
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("notes-\(UUID().uuidString).txt")
            try Data("hello from a file".utf8).write(to: file)
            defer { try? FileManager.default.removeItem(at: file) }

            // AFNetworking's POST with a body-constructing block: parts are streamed, never held whole.
            manager.post("post", parameters: ["title": "notes"], headers: nil, constructingBody: { form in
                try form.appendPart(fileURL: file, name: "attachment")
                form.appendPart(fileData: Data("{}".utf8), name: "meta", fileName: "meta.json", mimeType: "application/json")
            }, progress: { progress in print(progress.completedUnitCount) },
               success: { task, object in print((object as? JSONValue)?["files"] ?? "-") },
               failure: { task, error in print(error) })

            // Awaited: a transfer handle with upload progress and the typed result.
            let upload = try manager.uploadMultipart(to: "post", parameters: ["title": "notes"]) { form in
                try form.appendPart(fileURL: file, name: "attachment")
            }
            let result = try await upload.response
            print(result.status)   // 200 OK

            #expect(result.status == .ok)
            try await eventually { server.requestsReceived(forPath: "/post") == 2 }
        }
    }
}
