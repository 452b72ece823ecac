import Courier
import CourierTestServer
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// The README's and the "Interceptors and Retry" article's `ConnectivityRetrier` example, run
/// against the test server: the network is there, so the 503 goes on to the `RetryPolicy`.
@Suite("README connectivity retry")
struct ConnectivityReadmeTests {
    @Test("the connectivity retry example: ConnectivityRetrier and RetryPolicy composed")
    func connectivityExample() async throws {
        try await TestServer.withRunning { server in
            // No route to the server (the network is down)? Wait up to 30 s for one, then send again
            // once; a server error, or a failure while the network is there, goes on to the RetryPolicy.
            let manager = URLSessionManager()
            manager.interceptor = Interceptor([ConnectivityRetrier(maximumWait: 30), RetryPolicy(exponentialBackoffScale: 0.1)])
            let flaky = server.baseURL.appending(path: "retry/offline").appending(queryItems: [URLQueryItem(name: "fail", value: "1")])
            let (_, response) = try await manager.data(for: URLRequest(url: flaky))
            print(response.statusCode)   // 200: the 503 was not waited on; RetryPolicy retried it
            #expect(response.statusCode == 200)
        }
    }
}
