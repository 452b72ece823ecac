import Foundation
import Testing

@testable import courier

/// The progress bar's frames and summary, computed from plain values: lengths come from the
/// server (`Content-Length`, `Content-Range`) and times from the clock, so no value may trap.
@Suite("DownloadProgressBar formatting")
struct DownloadProgressBarTests {
    @Test("an ordinary frame: bar, percentage, sizes, rate and ETA")
    func ordinaryFrame() {
        let frame = DownloadProgressBar.render(done: 30_198_989, total: 67_108_864, initial: 0, elapsed: 1)
        #expect(frame == "[#############-----------------]  45%  28.8 MiB / 64.0 MiB  28.8 MiB/s  ETA 2s", "\(frame)")
    }

    @Test("a huge length at a low rate: an ETA beyond 99 days reads '>99d', no trap")
    func hugeTotalLowRate() {
        let frame = DownloadProgressBar.render(done: 1, total: Int64.max, initial: 0, elapsed: 1000)
        #expect(frame.hasSuffix("ETA >99d"), "\(frame)")
        #expect(frame.contains("8.00 EiB"), "\(frame)")
        let slow = DownloadProgressBar.render(done: 1 << 30, total: 1 << 40, initial: 0, elapsed: 1e9)
        #expect(slow.hasSuffix("ETA >99d"), "\(slow)")
    }

    @Test("no bytes yet or no time elapsed: no division trap; an unknown ETA reads '?'")
    func zeroRateAndZeroTime() {
        let waiting = DownloadProgressBar.render(done: 0, total: 100, initial: 0, elapsed: 10)
        #expect(waiting.hasSuffix("0 B/s  ETA ?"), "\(waiting)")
        let instant = DownloadProgressBar.render(done: Int64.max, total: Int64.max, initial: 0, elapsed: 0)
        #expect(instant.contains("100%"), "\(instant)")
        #expect(instant.hasSuffix("ETA 0s"), "\(instant)")
        let unknown = DownloadProgressBar.render(done: Int64.max, total: -1, initial: 0, elapsed: 0)
        #expect(unknown.hasPrefix("8.00 EiB  "), "\(unknown)")
    }

    @Test("values that make no sense (negative, done beyond total, initial beyond done) still render")
    func nonsenseValues() {
        let negative = DownloadProgressBar.render(done: -5, total: 10, initial: 0, elapsed: 1)
        #expect(negative.hasPrefix("[------------------------------]   0%"), "\(negative)")
        let extremes = DownloadProgressBar.render(done: Int64.min, total: Int64.max, initial: Int64.max, elapsed: 1)
        #expect(extremes.hasPrefix("[------------------------------]"), "\(extremes)")
        let beyond = DownloadProgressBar.render(done: 300, total: 100, initial: Int64.min, elapsed: 1)
        #expect(beyond.hasPrefix("[##############################] 100%"), "\(beyond)")
    }

    @Test("sizes up to Int64.max, and rates beyond it")
    func sizes() {
        #expect(DownloadProgressBar.size(812) == "812 B")
        #expect(DownloadProgressBar.size(12_595) == "12.3 KiB")
        #expect(DownloadProgressBar.size(1_288_490_189) == "1.20 GiB")
        #expect(DownloadProgressBar.size(3 << 40) == "3.00 TiB")
        #expect(DownloadProgressBar.size(Int64.max) == "8.00 EiB")
        #expect(DownloadProgressBar.size(-1) == "0 B")
        #expect(DownloadProgressBar.rate(1e30) == "867361737988 EiB/s")
        #expect(DownloadProgressBar.rate(.infinity) == "? B/s")
        #expect(DownloadProgressBar.rate(.nan) == "? B/s")
    }

    @Test("the summary line: huge sizes in no time, and zero sizes, don't trap")
    func summary() {
        #expect(DownloadProgressBar.summary(totalBytes: 1_048_576, transferredBytes: 1_048_576, elapsed: 2)
            == "Done. 1.0 MiB in 2.00s (512.0 KiB/s)\n")
        let huge = DownloadProgressBar.summary(totalBytes: Int64.max, transferredBytes: Int64.max, elapsed: 0)
        #expect(huge.hasPrefix("Done. 8.00 EiB in 0.00s ("), "\(huge)")
        let negative = DownloadProgressBar.summary(totalBytes: 0, transferredBytes: Int64.min, elapsed: -1)
        #expect(negative == "Done. 0 B in 0.00s (0 B/s)\n", "\(negative)")
    }
}
