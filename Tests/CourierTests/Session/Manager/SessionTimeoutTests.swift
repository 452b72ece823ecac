import Courier
import CourierEngine
import CourierTestServer
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// Which timeout applies: the configuration's, unless the request set its own.
@Suite("Session timeouts")
struct SessionTimeoutTests {
    static func timedOut(_ error: (any Error)?) -> Bool {
        if case .timedOut = error as? CourierError { return true }
        return false
    }

    @Test func configurationTimeoutAppliesToRequestsThatKeptTheDefault() async throws {
        try await TestServer.withRunning { server in
            var configuration = SessionConfiguration()
            configuration.timeoutIntervalForRequest = 0.5
            let recorder = CompletionRecorder()
            let request = URLRequest(url: server.sessionURL("/fault/no-response"))
            #expect(request.timeoutInterval == 60)  // Foundation's default
            URLSessionManager(configuration: configuration).dataTask(with: request, completionHandler: recorder.handler).resume()
            await recorder.wait()
            #expect(Self.timedOut(recorder.first?.error), "\(String(describing: recorder.first?.error))")
        }
    }

    @Test func requestTimeoutWinsOverTheConfiguration() async throws {
        try await TestServer.withRunning { server in
            var request = URLRequest(url: server.sessionURL("/fault/no-response"))
            request.timeoutInterval = 0.5
            let recorder = CompletionRecorder()
            URLSessionManager().dataTask(with: request, completionHandler: recorder.handler).resume()
            await recorder.wait()
            #expect(Self.timedOut(recorder.first?.error), "\(String(describing: recorder.first?.error))")
        }
    }

    /// Timeouts are the caller's numbers: infinite, enormous or not a number must mean "no such
    /// timeout" (or the longest one), never a trap converting them to nanoseconds.
    @Test(arguments: [Double.infinity, 1e300, Double.nan, -5])
    func anyTimeIntervalIsTaken(_ seconds: Double) async throws {
        try await TestServer.withRunning { server in
            var configuration = SessionConfiguration()
            configuration.timeoutIntervalForRequest = seconds
            configuration.timeoutIntervalForResource = seconds.isNaN || seconds > 0 ? seconds : 600
            var request = URLRequest(url: server.sessionURL("/get"))
            request.timeoutInterval = seconds
            let (object, response) = try await URLSessionManager(configuration: configuration).data(for: request)
            #expect(response.statusCode == 200)
            #expect(object != nil)
        }
    }
}

/// The session's proxy setting reaches the engine.
@Suite("Session proxy")
struct SessionProxyTests {
    @Test func requestsGoThroughTheConfiguredProxy() async throws {
        try await TestProxyServer.withRunning { proxy in
            try await TestServer.withRunning { server in
                var configuration = SessionConfiguration()
                configuration.proxy = EngineProxy(host: "127.0.0.1", port: proxy.port)
                let manager = HTTPSessionManager(baseURL: server.baseURL, configuration: configuration)
                let (object, response) = try await manager.get("get", parameters: ["via": "proxy"])
                #expect(response.statusCode == 200)
                #expect((object as? JSONValue)?["args"]?["via"] == "proxy")
                #expect(proxy.requestLines == ["GET \(server.baseURL.absoluteString)/get?via=proxy HTTP/1.1"])
            }
        }
    }
}
