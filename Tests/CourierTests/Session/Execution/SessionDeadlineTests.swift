import Courier
import CourierEngine
import CourierTestServer
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NIOCore
import NIOPosix
import Testing

/// `timeoutIntervalForResource` is one deadline for the whole task, fixed when it starts:
/// a chain of redirects that each answer in time still ends by it, on both execution paths
/// (the awaited direct runner and the task delegate), and a server that never answers the TLS
/// handshake ends the task by it, not by the 30 s connect timeout. The error names the
/// deadline and where the task was.
@Suite("Session resource deadline")
struct SessionDeadlineTests {
    /// A redirect after 1 s, for ever, on every connection: each hop is far inside the
    /// deadline; 20 of them are not.
    static let slowRedirects = HostileScript(
        [.readHead, .sleep(milliseconds: 1000), HostileStep.write("HTTP/1.1 302 Found\r\nLocation: /next\r\nContent-Length: 0\r\n\r\n")],
        afterwards: .repeatSteps)

    static func configuration(resource: TimeInterval) -> SessionConfiguration {
        var configuration = SessionConfiguration()
        configuration.timeoutIntervalForResource = resource
        configuration.maximumRedirects = 20
        return configuration
    }

    static func deadlineReason(_ error: (any Error)?) -> String? {
        guard case .timedOut(_, let reason) = error as? CourierError, reason.hasPrefix("deadline timeout") else { return nil }
        return reason
    }

    @Test func anAwaitedTaskEndsByOneDeadlineAcrossRedirects() async throws {
        try await HostileServer.withRunning(Self.slowRedirects) { server in
            let manager = URLSessionManager(configuration: Self.configuration(resource: 5))
            let started = ContinuousClock.now
            var caught: (any Error)?
            do {
                _ = try await manager.data(for: URLRequest(url: server.baseURL))
            } catch {
                caught = error
            }
            let reason = Self.deadlineReason(caught)
            #expect(reason?.contains("(on redirect ") == true, "\(String(describing: caught))")
            #expect(ContinuousClock.now - started < .seconds(15), "20 hops of 1 s would take 20 s")
        }
    }

    @Test func aTaskWithACompletionBlockEndsByOneDeadlineAcrossRedirects() async throws {
        try await HostileServer.withRunning(Self.slowRedirects) { server in
            let manager = URLSessionManager(configuration: Self.configuration(resource: 5))
            let recorder = CompletionRecorder()
            let started = ContinuousClock.now
            manager.dataTask(with: URLRequest(url: server.baseURL), completionHandler: recorder.handler).resume()
            await recorder.wait()
            let reason = Self.deadlineReason(recorder.first?.error)
            #expect(reason?.contains("(on redirect ") == true, "\(String(describing: recorder.first?.error))")
            #expect(ContinuousClock.now - started < .seconds(15), "20 hops of 1 s would take 20 s")
        }
    }

    @Test func aServerThatNeverAnswersTheTLSHandshakeEndsByTheDeadline() async throws {
        let listener = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .childChannelInitializer { channel in channel.eventLoop.makeSucceededVoidFuture() }
            .bind(host: "127.0.0.1", port: 0)
            .get()
        let port = try #require(listener.localAddress?.port)
        let manager = URLSessionManager(configuration: Self.configuration(resource: 4))
        let started = ContinuousClock.now
        var caught: (any Error)?
        do {
            _ = try await manager.data(for: URLRequest(url: try #require(URL(string: "https://127.0.0.1:\(port)/"))))
        } catch {
            caught = error
        }
        #expect(Self.deadlineReason(caught) == "deadline timeout during the TLS handshake", "\(String(describing: caught))")
        #expect(ContinuousClock.now - started < .seconds(20), "not the 30 s connect timeout")
        try await listener.close()
    }
}
