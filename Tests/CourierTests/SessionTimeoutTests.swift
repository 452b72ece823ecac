import Courier
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
        try await withSessionServer { server in
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
        try await withSessionServer { server in
            var request = URLRequest(url: server.sessionURL("/fault/no-response"))
            request.timeoutInterval = 0.5
            let recorder = CompletionRecorder()
            URLSessionManager().dataTask(with: request, completionHandler: recorder.handler).resume()
            await recorder.wait()
            #expect(Self.timedOut(recorder.first?.error), "\(String(describing: recorder.first?.error))")
        }
    }
}
