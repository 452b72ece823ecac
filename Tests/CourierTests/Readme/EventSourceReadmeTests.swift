import Courier
import CourierTestServer
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// The README's and the "Async and Typed Responses" article's event source examples, compiled
/// and run against the test server's `/sse/{key}` stream.
@Suite("README and article: event sources")
struct EventSourceReadmeTests {
    @Test("the README's example: resumed across connections until the server answers 204")
    func readmeExample() async throws {
        try await TestServer.withRunning { server in
            let manager = HTTPSessionManager(baseURL: server.baseURL)
            // The example begins
            let feed = try manager.eventSource("sse/prices", parameters: ["count": 4, "per": 2, "retry": 0])
            for try await event in feed {                              // ends when the server answers 204
                print(event.id ?? "-", event.data)                     // 1 event 1 … 4 event 4
            }
            print(feed.lastEventID ?? "none", feed.reconnections)     // 4 2
            // The example ends
            #expect(feed.lastEventID == "4")
            #expect(feed.reconnections == 2)
        }
    }

    @Test("the article's example: configuration, a Last-Event-ID to start from, leaving the loop")
    func articleExample() async throws {
        try await TestServer.withRunning { server in
            let manager = HTTPSessionManager(baseURL: server.baseURL)
            // The example begins
            var configuration = EventSourceConfiguration()
            configuration.initialReconnectionTime = .seconds(1)        // until the server sends retry:
            configuration.maximumReconnectionDelay = .seconds(30)      // the backoff's cap while it fails
            configuration.maximumConsecutiveFailures = 8               // then the last failure is thrown
            var request = URLRequest(url: server.baseURL.appending(path: "sse/orders"))
            request.setValue("2", forHTTPHeaderField: "Last-Event-ID") // where an earlier run stopped
            let orders = manager.eventSource(for: request, configuration: configuration)
            do {
                for try await event in orders {
                    print(event.id ?? "-", event.data)                 // 3 event 3, 4 event 4, 5 event 5
                    if event.id == "5" { break }                       // leaving the loop cancels the request
                }
            } catch CourierError.unacceptableStatusCode(let response, _, _) {
                print("not reconnecting after \(response.statusCode)") // a 4xx other than 408 and 429
            }
            // The example ends
            #expect(orders.lastEventID == "5")
            #expect(orders.reconnections == 0)
        }
    }
}
