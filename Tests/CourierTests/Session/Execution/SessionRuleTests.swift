@testable import Courier
import Foundation
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The session's small rules that ``TaskDelegate`` executes, with plain values: what a
/// download that ended early leaves behind, what a resent body becomes, and the request target
/// a Digest answer names.
@Suite("Session rules")
struct SessionRuleTests {
    static let url = URL(string: "http://example.com/files/big.bin")!
    static let file = URL(fileURLWithPath: "/tmp/partial.bin")

    static func response(_ status: Int, _ fields: [String: String] = [:]) -> HTTPURLResponse {
        HTTPURLResponse(url: url, statusCode: status, httpVersion: "HTTP/1.1", headerFields: fields)!
    }

    static func resumeData(
        _ response: HTTPURLResponse?, keep: Bool = true, wroteBytes: Bool = true, isCallersFile: Bool = false,
        previous: DownloadResumeData? = nil
    ) -> DownloadResumeData? {
        var original = URLRequest(url: url)
        original.setValue("bytes=10-", forHTTPHeaderField: "Range")
        original.setValue("\"v1\"", forHTTPHeaderField: "If-Range")
        return PartialDownloadRule.resumeData(
            for: file, response: response, keep: keep, wroteBytes: wroteBytes, isCallersFile: isCallersFile,
            originalRequest: original, previous: previous)
    }

    // MARK: - Resume data

    @Test func aFailedTransferOfTheResourceLeavesResumeData() throws {
        let data = try #require(Self.resumeData(Self.response(200, ["ETag": "\"abc\"", "Content-Length": "1000"])))
        #expect(data.partialFileURL == Self.file)
        #expect(data.validator == "\"abc\"")
        #expect(data.totalLength == 1000)
        #expect(data.request.value(forHTTPHeaderField: "Range") == nil)
        #expect(data.request.value(forHTTPHeaderField: "If-Range") == nil)
        #expect(!data.allowsResumeWithoutValidator)
    }

    @Test func aPartialResponseTakesItsCompleteLengthFromContentRange() throws {
        let response = Self.response(206, ["Content-Range": "bytes 10-99/5000", "Last-Modified": "Tue, 24 Nov 2026 10:00:00 GMT"])
        let data = try #require(Self.resumeData(response))
        #expect(data.totalLength == 5000)
        #expect(data.validator == "Tue, 24 Nov 2026 10:00:00 GMT")
    }

    @Test func nothingIsKeptWhenNotAskedOrNotTheResourceOrEmpty() {
        #expect(Self.resumeData(Self.response(200), keep: false) == nil)  // a plain cancel
        #expect(Self.resumeData(Self.response(404)) == nil)
        #expect(Self.resumeData(Self.response(200, ["Content-Encoding": "gzip"])) == nil)
        #expect(Self.resumeData(nil) == nil)
        #expect(Self.resumeData(Self.response(200), wroteBytes: false) == nil)
        // The caller's own partial file is worth describing even when nothing new was written.
        #expect(Self.resumeData(Self.response(200), wroteBytes: false, isCallersFile: true) != nil)
    }

    @Test func aResumedDownloadKeepsWhatItsPreviousResumeDataKnew() throws {
        var request = URLRequest(url: URL(string: "http://example.com/files/first.bin")!)
        request.setValue("bytes=0-", forHTTPHeaderField: "Range")
        let previous = DownloadResumeData(
            request: request, partialFileURL: Self.file, validator: "\"old\"", allowsResumeWithoutValidator: true,
            totalLength: 777)
        let data = try #require(Self.resumeData(Self.response(206), isCallersFile: true, previous: previous))
        #expect(data.request.url?.lastPathComponent == "first.bin")
        #expect(data.request.value(forHTTPHeaderField: "Range") == nil)
        #expect(data.validator == "\"old\"")
        #expect(data.totalLength == 777)
        #expect(data.allowsResumeWithoutValidator)
    }

    // MARK: - Body replay

    @Test func aResentBodyIsKeptDroppedOrMadeAgain() {
        #expect(BodyReplayRule.decide(previousMethod: "POST", nextMethod: "GET", isReplayable: false) == .drop)
        #expect(BodyReplayRule.decide(previousMethod: "post", nextMethod: "POST", isReplayable: true) == .keep)
        #expect(BodyReplayRule.decide(previousMethod: "PUT", nextMethod: "PUT", isReplayable: false) == .needsFreshBody)
        #expect(BodyReplayRule.decide(previousMethod: nil, nextMethod: "GET", isReplayable: true) == .keep)
        #expect(BodyReplayRule.decide(previousMethod: nil, nextMethod: nil, isReplayable: false) == .needsFreshBody)
    }

    // MARK: - Digest request target

    @Test func theDigestRequestTargetIsThePathAndQueryAsSent() {
        #expect(AuthenticationHeader.requestTarget(of: URL(string: "http://h/a%20b/c?x=1&y=%2F")) == "/a%20b/c?x=1&y=%2F")
        #expect(AuthenticationHeader.requestTarget(of: URL(string: "http://h")) == "/")
        #expect(AuthenticationHeader.requestTarget(of: URL(string: "http://h?q")) == "/?q")
        #expect(AuthenticationHeader.requestTarget(of: nil) == "/")
    }
}
