@testable import Courier
import CourierTestServer
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// `DownloadResumeData.allowsRestart`: with false, a `200` never truncates the partial file
/// (the caller's own bytes); the task fails with `invalidResumeResponse` and the file is left
/// as it was.
@Suite("Download resume: the restart switch")
struct DownloadRestartSwitchTests {
    /// Bytes that are not the server's `abc…z` pattern, so a rewrite is visible.
    static let callersBytes = Data(repeating: UInt8(ascii: "C"), count: 9_000)

    /// Expects `call` to be the `invalidResumeResponse` refusal of a `200`, and `file` unchanged.
    static func expectRefusedRestart(_ call: CompletionRecorder.Call, file: URL) throws {
        let error = try #require(call.error as? CourierError, "\(String(describing: call.error))")
        guard case .invalidResumeResponse(_, let reason) = error else {
            Issue.record("expected invalidResumeResponse, got \(error)")
            return
        }
        #expect(reason.contains("200"), "the reason names the status: \(reason)")
        #expect(call.response?.statusCode == 200)
        #expect(try Data(contentsOf: file) == Self.callersBytes, "the partial file is left as it was")
    }

    @Test("the rule: a 200 is refused only when the partial file may not be started over")
    func ruleRefusesARestartOnlyWhenForbidden() {
        let decide = { (offset: Int64, mayRestart: Bool) in
            ResumeResponseRule.decide(
                status: 200, requestedOffset: offset, contentRange: nil, contentLength: "500", knownTotal: nil,
                mayRestart: mayRestart)
        }
        #expect(decide(9_000, true) == .restart(expectedTotal: 500))
        #expect(decide(0, true) == .restart(expectedTotal: 500))
        guard case .refuse(let ranged) = decide(9_000, false), case .refuse(let unranged) = decide(0, false) else {
            Issue.record("a forbidden restart must be refused")
            return
        }
        #expect(ranged.contains("bytes from 9000 with 200") && ranged.contains("allowsRestart"))
        #expect(unranged.contains("200") && unranged.contains("allowsRestart"))
        // The switch is only about 200: a fitting 206 still appends, a 416 naming the size is complete.
        let partial = ResumeResponseRule.decide(
            status: 206, requestedOffset: 10, contentRange: "bytes 10-19/20", contentLength: "10", knownTotal: nil,
            mayRestart: false)
        #expect(partial == .append(offset: 10, expectedTotal: 20))
        let complete = ResumeResponseRule.decide(
            status: 416, requestedOffset: 20, contentRange: "bytes */20", contentLength: nil, knownTotal: nil, mayRestart: false)
        #expect(complete == .alreadyComplete)
    }

    @Test("a server ignoring Range (200) does not truncate the partial file when restarts are not allowed")
    func ignoredRangeIsRefused() async throws {
        try await TestServer.withRunning { server in
            let file = try DownloadResumeTests.temporaryFile(Self.callersBytes)
            defer { try? FileManager.default.removeItem(at: file) }
            let resumeData = DownloadResumeData(
                request: URLRequest(url: server.sessionURL("/download/20000")), partialFileURL: file,
                allowsResumeWithoutValidator: true, allowsRestart: false)
            let (call, task) = try await DownloadResumeTests.resume(resumeData)
            #expect(task.originalRequest?.value(forHTTPHeaderField: "Range") == "bytes=9000-")
            try Self.expectRefusedRestart(call, file: file)
        }
    }

    @Test("a 200 that breaks off mid-body leaves the partial file whole when restarts are not allowed")
    func ignoredRangeThenFailureKeepsTheFile() async throws {
        try await TestServer.withRunning { server in
            let file = try DownloadResumeTests.temporaryFile(Self.callersBytes)
            defer { try? FileManager.default.removeItem(at: file) }
            let resumeData = DownloadResumeData(
                request: URLRequest(url: server.sessionURL("/fault/short-body?length=50000&sent=100")), partialFileURL: file,
                allowsResumeWithoutValidator: true, allowsRestart: false)
            let (call, _) = try await DownloadResumeTests.resume(resumeData)
            try Self.expectRefusedRestart(call, file: file)
        }
    }

    @Test("a changed resource (If-Range does not match, 200) does not truncate the partial file")
    func changedResourceIsRefused() async throws {
        try await TestServer.withRunning { server in
            let file = try DownloadResumeTests.temporaryFile(Self.callersBytes)
            defer { try? FileManager.default.removeItem(at: file) }
            let resumeData = DownloadResumeData(
                request: URLRequest(url: server.sessionURL("/range/30000?etag=v2")), partialFileURL: file,
                validator: "\"range30000\"", allowsRestart: false)
            let (call, task) = try await DownloadResumeTests.resume(resumeData)
            #expect(task.originalRequest?.value(forHTTPHeaderField: "If-Range") == "\"range30000\"")
            try Self.expectRefusedRestart(call, file: file)
        }
    }

    @Test("without a validator (no Range is sent) a 200 does not truncate the partial file either")
    func noValidatorIsRefused() async throws {
        try await TestServer.withRunning { server in
            let file = try DownloadResumeTests.temporaryFile(Self.callersBytes)
            defer { try? FileManager.default.removeItem(at: file) }
            let resumeData = DownloadResumeData(
                request: URLRequest(url: server.sessionURL("/range/30000")), partialFileURL: file, allowsRestart: false)
            let (call, task) = try await DownloadResumeTests.resume(resumeData)
            #expect(task.originalRequest?.value(forHTTPHeaderField: "Range") == nil)
            try Self.expectRefusedRestart(call, file: file)
        }
    }

    @Test("an empty partial file is written whole by a 200 even when restarts are not allowed")
    func emptyFileIsWritten() async throws {
        try await TestServer.withRunning { server in
            let file = try DownloadResumeTests.temporaryFile(Data())
            defer { try? FileManager.default.removeItem(at: file) }
            let resumeData = DownloadResumeData(
                request: URLRequest(url: server.sessionURL("/download/20000")), partialFileURL: file,
                allowsResumeWithoutValidator: true, allowsRestart: false)
            let (call, _) = try await DownloadResumeTests.resume(resumeData)
            #expect(call.error == nil)
            #expect(call.response?.statusCode == 200)
            #expect(try Data(contentsOf: file) == DownloadResumeTests.rangeBytes(20_000))
        }
    }

    @Test("a 206 still appends when restarts are not allowed")
    func partialContentAppends() async throws {
        try await TestServer.withRunning { server in
            let file = try DownloadResumeTests.temporaryFile(DownloadResumeTests.rangeBytes(12_000))
            defer { try? FileManager.default.removeItem(at: file) }
            let resumeData = DownloadResumeData(
                request: URLRequest(url: server.sessionURL("/range/40000")), partialFileURL: file,
                allowsResumeWithoutValidator: true, allowsRestart: false)
            let (call, _) = try await DownloadResumeTests.resume(resumeData)
            #expect(call.error == nil)
            #expect(call.response?.statusCode == 206)
            #expect(try Data(contentsOf: file) == DownloadResumeTests.rangeBytes(40_000))
        }
    }

    @Test("the switch survives encoding and is carried into resume data made from a resumed task")
    func switchIsKept() throws {
        let file = try DownloadResumeTests.temporaryFile(Self.callersBytes)
        defer { try? FileManager.default.removeItem(at: file) }
        let url = try #require(URL(string: "http://127.0.0.1:1/file"))
        let request = URLRequest(url: url)
        let refusing = DownloadResumeData(request: request, partialFileURL: file, allowsRestart: false)
        #expect(try DownloadResumeData(encoded: refusing.encoded()).allowsRestart == false)
        let plain = DownloadResumeData(request: request, partialFileURL: file)
        #expect(plain.allowsRestart)
        #expect(try DownloadResumeData(encoded: plain.encoded()).allowsRestart)
        let response = try #require(
            HTTPURLResponse(url: url, statusCode: 206, httpVersion: "HTTP/1.1", headerFields: ["Content-Range": "bytes 0-9/100"]))
        let carried = PartialDownloadRule.resumeData(
            for: file, response: response, keep: true, wroteBytes: true, isCallersFile: true, originalRequest: request,
            previous: refusing)
        #expect(carried?.allowsRestart == false)
    }
}
