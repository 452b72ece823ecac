@testable import Courier
import CourierTestServer
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// A `206 Partial Content` to a request that asked for no range (RFC 9110 §15.3.7 forbids it):
/// its bytes are a part of the resource, so a download must fail rather than save them as the
/// whole file, and a partial file it was resuming stays as it was.
@Suite("206 without a Range request")
struct PartialContentWithoutRangeTests {
    @Test("the rule refuses a 206 when no Range was sent, and keeps the other answers")
    func ruleRefusesA206ToNoRange() {
        let refused = ResumeResponseRule.decide(
            status: 206, requestedOffset: nil, contentRange: "bytes 0-9999/100000", contentLength: "10000", knownTotal: nil)
        guard case .refuse(let reason) = refused else {
            Issue.record("accepted: \(refused)")
            return
        }
        #expect(reason.contains("without Range"), "\(reason)")
        let withoutContentRange = ResumeResponseRule.decide(
            status: 206, requestedOffset: nil, contentRange: nil, contentLength: "10", knownTotal: 100)
        guard case .refuse = withoutContentRange else {
            Issue.record("accepted: \(withoutContentRange)")
            return
        }
        // No Range: a 200 starts over, a 416 or another status is no resumption.
        #expect(
            ResumeResponseRule.decide(status: 200, requestedOffset: nil, contentRange: nil, contentLength: "42", knownTotal: nil)
                == .restart(expectedTotal: 42))
        #expect(
            ResumeResponseRule.decide(
                status: 200, requestedOffset: nil, contentRange: nil, contentLength: "42", knownTotal: nil, mayRestart: false)
                != .restart(expectedTotal: 42))
        #expect(
            ResumeResponseRule.decide(status: 404, requestedOffset: nil, contentRange: nil, contentLength: nil, knownTotal: nil)
                == .notResumed)
        // `Range: bytes=0-` is a range request: its 206 from 0 is appended at 0.
        #expect(
            ResumeResponseRule.decide(status: 206, requestedOffset: 0, contentRange: "bytes 0-9/10", contentLength: "10", knownTotal: nil)
                == .append(offset: 0, expectedTotal: 10))
    }

    @Test("a resume without a validator (no Range) answered with 206 fails and leaves the partial file as it was")
    func resumeThatStartsOverRefusesA206() async throws {
        try await TestServer.withRunning { server in
            let partial = Data(repeating: UInt8(ascii: "X"), count: 5_000)
            let file = try DownloadResumeTests.temporaryFile(partial)
            defer { try? FileManager.default.removeItem(at: file) }
            let resumeData = DownloadResumeData(
                request: URLRequest(url: server.sessionURL("/range/100000?partial_without_range=10000")), partialFileURL: file)
            let (call, task) = try await DownloadResumeTests.resume(resumeData)
            #expect(task.originalRequest?.value(forHTTPHeaderField: "Range") == nil)
            try DownloadResumeTests.expectRefused(call, file: file, contents: partial)
        }
    }

    @Test("a plain download answered with 206 to no Range fails and saves nothing")
    func plainDownloadRefusesA206() async throws {
        try await TestServer.withRunning { server in
            let destination = FileManager.default.temporaryDirectory.appendingPathComponent("courier-206-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: destination) }
            let recorder = CompletionRecorder()
            let task = URLSessionManager().downloadTask(
                with: URLRequest(url: server.sessionURL("/range/100000?partial_without_range=10000")),
                progress: nil, destination: { _, _ in destination },
                completionHandler: { response, url, error in recorder.handler(response, url, error) })
            task.resume()
            await recorder.wait()
            let call = try #require(recorder.first)
            let error = try #require(call.error as? CourierError, "\(String(describing: call.error))")
            guard case .invalidResumeResponse = error else {
                Issue.record("expected invalidResumeResponse, got \(error)")
                return
            }
            #expect(!FileManager.default.fileExists(atPath: destination.path), "nothing saved as the whole file")
        }
    }
}
