import Courier
import CourierTestServer
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HTTPTypes
import Testing

/// The server's own reason phrase at the session's boundary: swift-http-types' `HTTPResponse`
/// carries it (Foundation's `HTTPURLResponse` has no place for one).
@Suite("Reason phrase (session)")
struct ReasonPhraseSessionTests {
    static let script = HostileScript.answer(
        status: "418 I'm a teapot-ish custom text", headers: ["Content-Length: 2"], body: "ok", afterwards: .repeatSteps)

    @Test("HTTPResponse from data(for:) carries the server's phrase")
    func httpTypesResponseCarriesThePhrase() async throws {
        try await HostileServer.withRunning(Self.script) { server in
            let manager = URLSessionManager()
            let request = HTTPRequest(method: .get, scheme: "http", authority: "127.0.0.1:\(server.port)", path: "/teapot")
            let (data, response) = try await manager.data(for: request)
            #expect(response.status.code == 418)
            #expect(response.status.reasonPhrase == "I'm a teapot-ish custom text")
            #expect(data == Data("ok".utf8))
        }
    }

    @Test("SessionTask.receivedResponse carries the server's phrase")
    func receivedResponseCarriesThePhrase() async throws {
        try await HostileServer.withRunning(Self.script) { server in
            let manager = URLSessionManager()
            let recorder = CompletionRecorder()
            let task = manager.dataTask(with: URLRequest(url: server.url("/teapot")), completionHandler: recorder.handler)
            task.resume()
            await recorder.wait()
            #expect(recorder.first?.response?.statusCode == 418)
            #expect(task.receivedResponse?.status.code == 418)
            #expect(task.receivedResponse?.status.reasonPhrase == "I'm a teapot-ish custom text")
        }
    }
}
