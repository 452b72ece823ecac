@testable import Courier
import Testing

/// The pure rules of resumed downloads: strict `Content-Range` parsing and what a resumed
/// task does with each response.
@Suite("Content-Range and resume rules")
struct ContentRangeTests {
    /// `ResumeResponseRule.decide` with positional arguments.
    func decide(_ status: Int, _ offset: Int64, _ range: String?, _ length: String?, _ known: Int64? = nil) -> ResumeResponseRule {
        ResumeResponseRule.decide(status: status, requestedOffset: offset, contentRange: range, contentLength: length, knownTotal: known)
    }

    @Test func validRangesParse() {
        #expect(ContentRange("bytes 10-99/100") == ContentRange(first: 10, last: 99, completeLength: 100))
        #expect(ContentRange("bytes 0-0/*") == ContentRange(first: 0, last: 0, completeLength: nil))
        #expect(ContentRange("bytes */100") == ContentRange(first: nil, last: nil, completeLength: 100))
        #expect(ContentRange("BYTES 1-2/3")?.length == 2)
        #expect(ContentRange("bytes 0-9223372036854775806/9223372036854775807")?.length == Int64.max)
    }

    @Test(arguments: [
        "bytes 5-*/*", "bytes 5-/*", "bytes -5/10", "bytes 9-5/10", "bytes 0-10/10", "bytes */*", "bytes 0-1",
        "items 0-1/2", "bytes +1-2/3", "bytes 1 -2/3", "bytes 0-99999999999999999999/*", "bytes 0-1/99999999999999999999",
        "bytes 0-9223372036854775807/*", "bytes=0-1/2", "bytes ", "",
    ])
    func malformedRangesAreRejected(_ value: String) {
        let range = ContentRange(value)
        // `bytes 0-(2^63-1)/*` parses but its length does not fit: it must not be usable.
        if value == "bytes 0-9223372036854775807/*" {
            #expect(range?.length == nil)
        } else {
            #expect(range == nil, "\(value)")
        }
    }

    @Test func requestedOffsetIsReadFromTheRangeHeader() {
        #expect(ContentRange.requestedOffset(rangeHeader: "bytes=12345-") == 12345)
        #expect(ContentRange.requestedOffset(rangeHeader: "bytes=1-2") == nil)
        #expect(ContentRange.requestedOffset(rangeHeader: "bytes=-5") == nil)
        #expect(ContentRange.requestedOffset(rangeHeader: nil) == nil)
    }

    @Test func matching206Appends() {
        #expect(decide(206, 100, "bytes 100-199/200", "100", 200) == .append(offset: 100, expectedTotal: 200))
        #expect(decide(206, 100, "bytes 100-199/*", nil) == .append(offset: 100, expectedTotal: 200))
    }

    @Test(arguments: [
        ("bytes 101-199/200", "99", Int64?.none),  // starts elsewhere
        ("bytes 100-*/*", "9223372036854775807", nil),  // the open-ended lie
        ("bytes 100-199/200", "9223372036854775807", nil),  // Content-Length disagrees
        ("bytes 100-199/200", "-100", nil),  // a malformed Content-Length
        ("bytes 100-199/300", "100", 200),  // another complete length
        ("bytes 100-9223372036854775807/*", nil, nil),  // the end overflows
    ] as [(String, String?, Int64?)])
    func mismatched206IsRefused(range: String, length: String?, known: Int64?) {
        let rule = decide(206, 100, range, length, known)
        guard case .refuse = rule else {
            Issue.record("\(range) / \(length ?? "-"): \(rule)")
            return
        }
    }

    @Test func contentCoded206IsRefused() {
        let rule = ResumeResponseRule.decide(
            status: 206, requestedOffset: 0, contentRange: "bytes 0-9/10", contentLength: "10", knownTotal: nil, contentCoded: true)
        guard case .refuse = rule else {
            Issue.record("\(rule)")
            return
        }
        #expect(ResumeResponseRule.isContentCoded("gzip"))
        #expect(!ResumeResponseRule.isContentCoded(" identity "))
        #expect(!ResumeResponseRule.isContentCoded(nil))
    }

    @Test func otherStatuses() {
        #expect(decide(206, 5, nil, "1", nil) != .notResumed)
        #expect(decide(200, 5, nil, "42", 10) == .restart(expectedTotal: 42))
        #expect(decide(200, 5, nil, "huge", nil) == .restart(expectedTotal: -1))
        #expect(decide(416, 10, "bytes */10", nil, nil) == .alreadyComplete)
        #expect(decide(416, 10, "bytes */11", nil, nil) == .notResumed)
        #expect(decide(404, 10, nil, nil, nil) == .notResumed)
    }

    @Test func completeLengthKeptInResumeData() {
        #expect(ResumeResponseRule.completeLength(status: 206, contentRange: "bytes 5-9/10", contentLength: "5", contentCoded: false) == 10)
        #expect(ResumeResponseRule.completeLength(status: 200, contentRange: nil, contentLength: "10", contentCoded: false) == 10)
        #expect(ResumeResponseRule.completeLength(status: 200, contentRange: nil, contentLength: "10", contentCoded: true) == nil)
        #expect(
            ResumeResponseRule.completeLength(status: 206, contentRange: "bytes 5-*/*", contentLength: nil, contentCoded: false) == nil)
    }
}
