import Courier
import CourierTestServer
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// Interceptors on every shape at once (a block task, an awaited call, a typed verb, a retried
/// download) and cURL descriptions, against the test server (the article's version is
/// `InterceptorDocumentationExamples`).
@Suite("README interceptors")
struct InterceptorReadmeTests {
    @Test("the README's interceptor example")
    func readmeInterceptorExample() async throws {
        try await TestServer.withRunning { server in
            let recorder = CompletionRecorder()
            // The tour begins (the completion also records)
            let manager = URLSessionManager()
            manager.interceptor = RetryPolicy(retryLimit: 3, exponentialBackoffScale: 0.1)

            let auth = AuthenticationInterceptor(token: "expired") { rejected in
                "fresh"  // ask your token endpoint here; `rejected` is the token the server refused
            }
            let task = manager.dataTask(with: URLRequest(url: server.sessionURL("/retry/readme?fail=2")),
                                        interceptor: auth, completionHandler: { response, object, error in
                print(response?.statusCode ?? 0, error == nil)   // 200 true, after 2 retries
                recorder.handler(response, object, error)
            })
            task.resume()
            let (_, response) = try await manager.data(for: URLRequest(url: server.sessionURL("/bearer/fresh")),
                                                       interceptor: auth)
            print(response.statusCode)                           // 200: a 401, one refresh, one replay

            let api = HTTPSessionManager(baseURL: server.baseURL)
            let token = try await api.get("bearer/fresh", serializer: JSONResponseSerializer(), interceptor: auth)
            print(token.status, token.value?["token"] ?? "-")    // 200 OK "fresh"
            let destination = FileManager.default.temporaryDirectory.appendingPathComponent("readme-retry.json")
            let file = try await manager.download(URLRequest(url: server.sessionURL("/retry/file?fail=1")), to: destination).value
            print(try String(contentsOf: file, encoding: .utf8))  // the JSON with "attempts" : 2; no 503 body

            var request = URLRequest(url: server.sessionURL("/anything"))
            request.httpMethod = "POST"
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            request.httpBody = Data(#"{"name": "O'Brien"}"#.utf8)
            print(request.cURLDescription)
            print(task.cURLDescription)
            // The tour ends
            await recorder.wait()
            #expect(recorder.first?.response?.statusCode == 200)
            #expect(task.retryCount == 2)
            #expect(response.statusCode == 200)
            #expect(auth.token == "fresh")
            #expect(token.status == .ok)
            #expect(token.value?["token"] == "fresh")
            #expect(file == destination)
            #expect(try JSONValue(parsing: Data(contentsOf: file))["attempts"]?.intValue == 2)
            #expect(try String(contentsOf: file, encoding: .utf8).contains(#""attempts" : 2"#))
            try? FileManager.default.removeItem(at: file)
            #expect(request.cURLDescription
                == #"curl -X 'POST' '\#(server.baseURL.absoluteString)/anything' -H 'Content-Type: application/json' --data-raw '{"name": "O'\''Brien"}'"#)
            // The task's last attempt carries the token the interceptor held when it was adapted:
            // "fresh" if its retries came after the second call's refresh, else "expired" (the two
            // calls run at the same time; under load either order happens). Its description shows
            // exactly the token the server saw on that attempt.
            let sent = (recorder.first?.object as? JSONValue)?["authorization"]?.stringValue
            #expect(sent == "Bearer fresh" || sent == "Bearer expired")
            #expect(task.cURLDescription.contains("Authorization: \(sent ?? "none")"))
        }
    }
}
