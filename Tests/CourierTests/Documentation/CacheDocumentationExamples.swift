import Courier
import CourierTestServer
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// The example of the "HTTP Cache" article, run against the in-process test server.
@Suite("Documentation: HTTP Cache")
struct CacheDocumentationExamples {
    @Test("a stored response answers without the network")
    func cache() async throws {
        try await TestServer.withRunning { server in
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("my-app-cache-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: directory) }
            var configuration = SessionConfiguration()
            configuration.cache = HTTPCache(memoryCapacity: 4 << 20, diskCapacity: 64 << 20, directory: directory)
            let manager = URLSessionManager(configuration: configuration)

            let url = server.baseURL.appending(path: "cache/60")     // Cache-Control: public, max-age=60
            _ = try await manager.data(for: URLRequest(url: url))      // from the network, stored
            let task = manager.dataTask(with: URLRequest(url: url), completionHandler: { response, object, error in
                // the stored response, through the serializer and the completion queue as usual
            })
            task.resume()                                              // nothing is sent: task.metrics?.resourceFetchType == .localCache

            // No network at all: the stored response, or CourierError.notCached.
            _ = try await manager.data(for: URLRequest(url: url, cachePolicy: .returnCacheDataDontLoad))

            try await eventually { task.state == .completed }
            #expect(task.error == nil)
            #expect(task.response?.statusCode == 200)
            #expect(task.metrics?.resourceFetchType == .localCache)
            #expect(server.requestsReceived(forPath: "/cache/60") == 1)
            let uncached = URLRequest(url: server.baseURL.appending(path: "get"), cachePolicy: .returnCacheDataDontLoad)
            await #expect(throws: CourierError.self) { _ = try await manager.data(for: uncached) }
        }
    }
}
