import Courier
import CourierTestServer
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// The examples of the "Interceptors and Retry" article, run against the in-process test server
/// (its `/retry/KEY?fail=N` endpoint fails the first N requests; `/bearer/TOKEN` wants that token).
@Suite("Documentation: Interceptors and Retry")
struct InterceptorDocumentationExamples {
    @Test("retry policy, bearer tokens, cURL")
    func interceptors() async throws {
        try await TestServer.withRunning { server in
            let manager = URLSessionManager()
            // Idempotent methods after 408/429/500/502/503/504, a connection lost before any response
            // byte, or a connect timeout: up to 2 retries by default, 0.5 s × 2^n (+ up to 25 % jitter),
            // or the response's Retry-After (seconds or HTTP-date) up to 60 s. Never a POST.
            manager.interceptor = RetryPolicy(retryLimit: 3, exponentialBackoffScale: 0.1)

            // Bearer tokens: one refresh for any number of concurrent 401s, each request replayed once.
            let auth = AuthenticationInterceptor(token: "expired") { rejected in
                "fresh"  // ask your token endpoint here; `rejected` is the token the server refused
            }
            let flaky = server.baseURL.appending(path: "retry/docs").appending(queryItems: [URLQueryItem(name: "fail", value: "2")])
            let task = manager.dataTask(with: URLRequest(url: flaky), interceptor: auth, completionHandler: { response, object, error in
                print(response?.statusCode ?? 0, error == nil)   // 200 true, after 2 retries
            })
            task.resume()
            let (_, response) = try await manager.data(for: URLRequest(url: server.baseURL.appending(path: "bearer/fresh")),
                                                       interceptor: auth)
            print(response.statusCode)                           // 200: a 401, one refresh, one replay

            // The curl command that sends the same request (method, headers, body; shell-quoted).
            var request = URLRequest(url: server.baseURL.appending(path: "anything"))
            request.httpMethod = "POST"
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            request.httpBody = Data(#"{"name": "O'Brien"}"#.utf8)
            print(request.cURLDescription)
            // curl -X 'POST' 'http://127.0.0.1:PORT/anything' -H 'Content-Type: application/json' --data-raw '{"name": "O'\''Brien"}'

            try await eventually { task.state == .completed }
            #expect(task.response?.statusCode == 200)
            #expect(task.retryCount == 2)
            #expect(response.statusCode == 200)
            #expect(auth.token == "fresh")
            #expect(request.cURLDescription
                == #"curl -X 'POST' '\#(server.baseURL.absoluteString)/anything' -H 'Content-Type: application/json' --data-raw '{"name": "O'\''Brien"}'"#)
        }
    }

    @Test("an interceptor of your own")
    func custom() async throws {
        try await TestServer.withRunning { server in
            // Adapt each attempt's request; leave retry to the default (.doNotRetry).
            struct APIKey: RequestInterceptor {
                let key: String
                func adapt(_ request: URLRequest, for task: SessionTask) async throws -> URLRequest {
                    var request = request
                    request.setValue(key, forHTTPHeaderField: "X-Api-Key")
                    return request
                }
            }
            let api = HTTPSessionManager(baseURL: server.baseURL)
            api.interceptor = Interceptor([APIKey(key: "k-123"), RetryPolicy()])   // adapted in order
            let (object, _) = try await api.get("headers")
            print((object as? JSONValue)?["headers"]?["X-Api-Key"] ?? "-")      // "k-123"

            #expect((object as? JSONValue)?["headers"]?["X-Api-Key"] == "k-123")
        }
    }
}
