import Testing

@testable import CourierEngine

/// `throttle.shouldReport`, callable inside `#expect` (which cannot take a mutating call).
private func report(_ throttle: inout UploadProgressThrottle, sent: Int64, now: UInt64, final: Bool = false) -> Bool {
    throttle.shouldReport(sent: sent, now: now, final: final)
}

@Suite("UploadProgressThrottle")
struct UploadProgressThrottleTests {
    @Test func reportsTheFirstEveryStepAndTheLast() {
        let total: Int64 = 64 << 20
        var throttle = UploadProgressThrottle(expected: total)
        #expect(throttle.step == total / 100)
        var reported: [Int64] = []
        var sent: Int64 = 0
        while sent < total {
            sent += 64 << 10
            // The clock never moves: only bytes decide.
            if throttle.shouldReport(sent: sent, now: 1_000) { reported.append(sent) }
        }
        #expect(reported.first == 64 << 10)
        #expect(reported.last == total)
        #expect(reported == reported.sorted())
        #expect(reported.count <= 102)
        #expect(reported.count >= 90)
    }

    @Test func reportsAfterTheIntervalEvenBelowTheStep() {
        var throttle = UploadProgressThrottle(expected: 1 << 30, intervalNanoseconds: 100)
        #expect(report(&throttle, sent: 10, now: 0))
        #expect(!report(&throttle, sent: 20, now: 99))
        #expect(report(&throttle, sent: 30, now: 100))
        // An unchanged count is never reported twice.
        #expect(!report(&throttle, sent: 30, now: 1_000))
        #expect(!report(&throttle, sent: 30, now: 1_000, final: true))
    }

    @Test func finalReportsWhatIsLeftOfAnUnknownLength() {
        var throttle = UploadProgressThrottle(expected: nil)
        #expect(throttle.step == 1 << 20)
        #expect(report(&throttle, sent: 100, now: 0))
        #expect(!report(&throttle, sent: 200, now: 1))
        #expect(report(&throttle, sent: 250, now: 2, final: true))
        #expect(throttle.reported == 250)
    }

    @Test func smallBodiesStepAtLeast64KiB() {
        var throttle = UploadProgressThrottle(expected: 1_000)
        #expect(throttle.step == 64 * 1024)
        #expect(report(&throttle, sent: 500, now: 0))
        #expect(report(&throttle, sent: 1_000, now: 0))
    }

    @Test func anEmptyBodyReportsZeroOnceAtTheEnd() {
        var throttle = UploadProgressThrottle(expected: 0)
        #expect(!report(&throttle, sent: 0, now: 0))
        #expect(report(&throttle, sent: 0, now: 0, final: true))
        #expect(!report(&throttle, sent: 0, now: 0, final: true))
    }
}
