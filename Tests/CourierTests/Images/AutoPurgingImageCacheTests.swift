import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Synchronization
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

@testable import Courier

/// A PNG header `width` × `height` pixels: enough for ``Image`` to read its size.
func pngHeader(width: Int, height: Int) -> Data {
    func be32(_ value: Int) -> [UInt8] { [24, 16, 8, 0].map { UInt8(value >> $0 & 0xFF) } }
    return Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + be32(13) + Array("IHDR".utf8) + be32(width) + be32(height) + [8, 6, 0, 0, 0])
}

/// AFN's AFAutoPurgingImageCacheTests, with its figures: its logo costs 1,020,000 bytes
/// (510 × 500 × 4), the cache holds 10 of them and purges down to 6.
@Suite struct AutoPurgingImageCacheTests {
    static let logo = Image(data: pngHeader(width: 510, height: 500))!
    static let imageSize: UInt64 = 1_020_000
    let cache = AutoPurgingImageCache(purgesOnMemoryPressure: false)
    let request = URLRequest(url: URL(string: "http://test.com/image")!)

    @Test func defaultsAreAFNs() {
        #expect(cache.memoryCapacity == 100 * 1024 * 1024)
        #expect(cache.preferredMemoryUsageAfterPurge == 60 * 1024 * 1024)
        #expect(cache.memoryUsage == 0)
    }

    @Test func imageIsReturnedForIdentifierAndRequest() throws {
        cache.add(Self.logo, withIdentifier: "logo")
        #expect(cache.image(withIdentifier: "logo") == Self.logo)
        cache.add(Self.logo, for: request, withAdditionalIdentifier: nil)
        #expect(cache.image(for: request, withAdditionalIdentifier: nil) == Self.logo)
        #expect(cache.image(withIdentifier: "http://test.com/image") == Self.logo)
    }

    @Test func keyIsURLStringPlusAdditionalIdentifier() {
        cache.add(Self.logo, for: request, withAdditionalIdentifier: "filter")
        #expect(cache.image(for: request, withAdditionalIdentifier: "filter") == Self.logo)
        #expect(cache.image(withIdentifier: "http://test.com/imagefilter") == Self.logo)
        #expect(cache.image(for: request, withAdditionalIdentifier: nil) == nil)
        #expect(cache.image(for: URLRequest(url: URL(string: "http://test.com/differentImage")!), withAdditionalIdentifier: "filter") == nil)
        #expect(!cache.removeImage(for: request, withAdditionalIdentifier: nil))
        #expect(!cache.removeImage(for: request, withAdditionalIdentifier: "nofilter"))
        #expect(cache.image(for: request, withAdditionalIdentifier: "filter") != nil)
    }

    @Test func duplicateAddReplacesAndChargesOnce() throws {
        let other = try #require(Image(data: pngHeader(width: 10, height: 10)))
        cache.add(Self.logo, for: request, withAdditionalIdentifier: nil)
        cache.add(other, for: request, withAdditionalIdentifier: nil)
        #expect(cache.image(for: request, withAdditionalIdentifier: nil) == other)
        #expect(cache.memoryUsage == 400)
    }

    @Test func removeReportsWhetherThereWasAnImage() {
        cache.add(Self.logo, withIdentifier: "logo")
        #expect(cache.removeImage(withIdentifier: "logo"))
        #expect(!cache.removeImage(withIdentifier: "logo"))
        #expect(cache.image(withIdentifier: "logo") == nil)
        cache.add(Self.logo, for: request, withAdditionalIdentifier: "filter")
        #expect(cache.removeImage(for: request, withAdditionalIdentifier: "filter"))
        #expect(!cache.removeImage(for: request, withAdditionalIdentifier: "filter"))
        #expect(cache.memoryUsage == 0)
        #expect(!cache.removeAllImages())
        cache.add(Self.logo, withIdentifier: "a")
        #expect(cache.removeAllImages())
        #expect(cache.memoryUsage == 0)
    }

    @Test func memoryUsageIsWidthTimesHeightTimesFour() {
        cache.add(Self.logo, withIdentifier: "logo")
        #expect(cache.memoryUsage == 1_020_000)
        cache.removeImage(withIdentifier: "logo")
        #expect(cache.memoryUsage == 0)
    }

    @Test func imagesArePurgedWhenCapacityIsReached() {
        let cache = AutoPurgingImageCache(
            memoryCapacity: 10 * Self.imageSize, preferredMemoryUsageAfterPurge: 6 * Self.imageSize, purgesOnMemoryPressure: false)
        for index in 1...10 {
            cache.add(Self.logo, withIdentifier: "image-\(index)")
            #expect(cache.memoryUsage == UInt64(index) * Self.imageSize)
        }
        cache.add(Self.logo, withIdentifier: "image-11")
        #expect(cache.memoryUsage == 6 * Self.imageSize)
    }

    @Test func oldestLastAccessIsPurgedFirst() {
        let cache = AutoPurgingImageCache(
            memoryCapacity: 10 * Self.imageSize, preferredMemoryUsageAfterPurge: 6 * Self.imageSize, purgesOnMemoryPressure: false)
        for index in 0..<10 { cache.add(Self.logo, withIdentifier: "image-\(index)") }
        #expect(cache.image(withIdentifier: "image-0") != nil)  // a read refreshes image-0
        cache.add(Self.logo, withIdentifier: "image-10")
        #expect(cache.memoryUsage == 6 * Self.imageSize)
        for index in 0...10 {
            let kept = cache.image(withIdentifier: "image-\(index)") != nil
            #expect(kept == (index == 0 || index >= 6), "image-\(index)")
        }
    }

    @Test func purgeStopsAtTheFirstEntryReachingTheTarget() throws {
        // Capacity 1000, preferred 500: usage 1200 must shed 700; the oldest entries are 400 and
        // 400 bytes, so two go (800 ≥ 700) and usage ends at 400, below the preferred figure.
        let cache = AutoPurgingImageCache(memoryCapacity: 1000, preferredMemoryUsageAfterPurge: 500, purgesOnMemoryPressure: false)
        let small = try #require(Image(data: pngHeader(width: 10, height: 10)))  // 400 bytes
        cache.add(small, withIdentifier: "a")
        cache.add(small, withIdentifier: "b")
        #expect(cache.memoryUsage == 800)
        cache.add(small, withIdentifier: "c")
        #expect(cache.memoryUsage == 400)
        #expect(cache.image(withIdentifier: "c") != nil)
        #expect(cache.image(withIdentifier: "a") == nil && cache.image(withIdentifier: "b") == nil)
    }

    @Test func shouldCacheIsAlwaysTrue() {
        #expect(cache.shouldCache(Self.logo, for: request, withAdditionalIdentifier: "filter"))
    }

    @Test func memoryPressureEmptiesTheCache() async throws {
        let monitor = MemoryPressureMonitor(memoryEventsPath: nil, pressurePath: nil)
        cache.add(Self.logo, withIdentifier: "logo")
        monitor.addHandler { [cache] _ in cache.handleMemoryPressure() }
        monitor.signalMemoryPressure()
        try await eventually { cache.memoryUsage == 0 }
        #expect(cache.image(withIdentifier: "logo") == nil)
    }

    @Test func concurrentAddsAndReadsKeepUsageExact() async {
        let cache = AutoPurgingImageCache(memoryCapacity: .max, preferredMemoryUsageAfterPurge: .max, purgesOnMemoryPressure: false)
        await withTaskGroup(of: Void.self) { group in
            for worker in 0..<8 {
                group.addTask {
                    for index in 0..<200 {
                        cache.add(Self.logo, withIdentifier: "w\(worker)-\(index)")
                        _ = cache.image(withIdentifier: "w\(worker)-\(index / 2)")
                    }
                }
            }
        }
        #expect(cache.memoryUsage == 1600 * Self.imageSize)
    }

    @Test func costSaturatesInsteadOfOverflowing() {
        #expect(ImageCachePurgeRule.cost(pixelWidth: Int.max, pixelHeight: Int.max) == .max)
        #expect(ImageCachePurgeRule.cost(pixelWidth: 1 << 31, pixelHeight: 1 << 31) == .max)
        #expect(ImageCachePurgeRule.cost(pixelWidth: 16, pixelHeight: 12) == 768)
    }

    @Test func aHeaderClaimingUInt32MaxSquaredNeitherTrapsNorStays() throws {
        let huge = try #require(Image(data: pngHeader(width: 0xFFFF_FFFF, height: 0xFFFF_FFFF)))
        #expect(huge.pixelWidth == 0xFFFF_FFFF)
        #expect(huge.pixelCount == .max)  // (2³² − 1)² does not fit an Int: saturates rather than trapping
        #expect(Image(data: pngHeader(width: 0, height: 10)) == nil)
        cache.add(Self.logo, withIdentifier: "logo")
        cache.add(huge, withIdentifier: "huge")
        // Its cost saturates at UInt64.max: the purge empties the cache instead of wrapping usage.
        #expect(cache.memoryUsage == 0)
        #expect(cache.image(withIdentifier: "huge") == nil)
    }
}

/// The memory-pressure readings and the rule that turns them into purges, with plain values.
@Suite struct MemoryPressureReadingTests {
    @Test func parsesCgroupMemoryEvents() {
        #expect(MemoryPressureReading.eventCount(fromMemoryEvents: "low 0\nhigh 12\nmax 3\noom 1\noom_kill 1\n") == 17)
        #expect(MemoryPressureReading.eventCount(fromMemoryEvents: "low 5\n") == nil)
        #expect(MemoryPressureReading.eventCount(fromMemoryEvents: "high x\nmax 18446744073709551615\noom 5") == .max)
    }

    @Test func parsesPSI() {
        let psi = "some avg10=31.50 avg60=2.00 avg300=0.10 total=123\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"
        #expect(MemoryPressureReading.someAverage10(fromPressure: psi) == 31.5)
        #expect(MemoryPressureReading.someAverage10(fromPressure: "full avg10=9.00") == nil)
        #expect(MemoryPressureReading.someAverage10(fromPressure: "some avg10=nan") == nil)
    }

    @Test func findsTheCgroupPath() {
        #expect(MemoryPressureReading.cgroupPath(fromProcSelfCgroup: "0::/user.slice/app.scope\n") == "/user.slice/app.scope")
        #expect(MemoryPressureReading.cgroupPath(fromProcSelfCgroup: "12:memory:/docker/abc\n") == nil)
        #expect(MemoryPressureReading.cgroupPath(fromProcSelfCgroup: "0::/../etc\n") == nil)
    }

    @Test func detectorFiresOnRisesAndThresholdCrossings() {
        var detector = MemoryPressureDetector(stallThreshold: 20)
        let step1 = detector.observe(.init(eventCount: 5, someAverage10: 0))
        #expect(!step1)  // baseline
        let step2 = detector.observe(.init(eventCount: 5, someAverage10: 10))
        #expect(!step2)
        let step3 = detector.observe(.init(eventCount: 6, someAverage10: 10))
        #expect(step3)  // high/max rose
        let step4 = detector.observe(.init(eventCount: 6, someAverage10: 25))
        #expect(step4)  // crossed 20 %
        let step5 = detector.observe(.init(eventCount: 6, someAverage10: 40))
        #expect(!step5)  // still above: once
        let step6 = detector.observe(.init(eventCount: 6, someAverage10: 5))
        #expect(!step6)
        let step7 = detector.observe(.init(eventCount: nil, someAverage10: 30))
        #expect(step7)
        let unreadable = detector.observe(.init(eventCount: nil, someAverage10: nil))  // a file caught mid-rewrite
        #expect(!unreadable)
        let rose = detector.observe(.init(eventCount: 7, someAverage10: 30))  // still compared with 6
        #expect(rose)
    }

    @Test func garbageHugeAndMissingFieldsAreSkipped() {
        #expect(MemoryPressureReading.eventCount(fromMemoryEvents: "") == nil)
        #expect(MemoryPressureReading.eventCount(fromMemoryEvents: "high\nmax -1\noom 1 2\n\u{0}\u{FFFF}") == nil)
        #expect(MemoryPressureReading.eventCount(fromMemoryEvents: "high 99999999999999999999999\nmax 4") == 4)
        #expect(MemoryPressureReading.eventCount(fromMemoryEvents: String(repeating: "high 18446744073709551615\n", count: 3)) == .max)
        #expect(MemoryPressureReading.someAverage10(fromPressure: "some avg10=1e400 avg60=0") == nil)
        #expect(MemoryPressureReading.someAverage10(fromPressure: "some avg10=-3") == nil)
        #expect(MemoryPressureReading.someAverage10(fromPressure: "some avg60=3 total=9") == nil)
        #expect(MemoryPressureReading.someAverage10(fromPressure: "some avg10=") == nil)
        #expect(MemoryPressureReading.cgroupPath(fromProcSelfCgroup: "0::relative\n") == nil)
    }

    @Test func aNaNIntervalIsTheDefaultNotATrap() {
        // `max(.nan, 0.1)` is NaN, and the poll timer's Int(NaN × 10⁹) would trap at the first handler.
        #expect(MemoryPressureMonitor(memoryEventsPath: nil, pressurePath: nil, interval: .nan).interval == 2)
        #expect(MemoryPressureMonitor(memoryEventsPath: nil, pressurePath: nil, interval: -5).interval == 0.1)
        #expect(MemoryPressureMonitor(memoryEventsPath: nil, pressurePath: nil, interval: .infinity).interval == .infinity)
    }

    /// The files are the caller's to name: a FIFO (or anything but a regular file) is not read.
    /// Opening a FIFO for reading blocks until a writer comes, which held the monitor's poll
    /// (and a caller of checkNow) for ever. A thread plays that writer after 5 s, so a
    /// regression fails instead of hanging.
    @Test func aFIFONamedAsAPressureFileIsNotWaitedOn() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-mp-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let fifo = directory.appendingPathComponent("memory.events")
        try #require(mkfifo(fifo.path, 0o600) == 0)
        let state = Mutex((done: false, wrote: false))
        Thread.detachNewThread {
            Thread.sleep(forTimeInterval: 5)
            while !state.withLock({ $0.done }) {
                let writer = open(fifo.path, O_WRONLY | O_NONBLOCK | O_CLOEXEC)  // only while a reader waits
                if writer >= 0 {
                    _ = "high 9\n".withCString { write(writer, $0, 7) }
                    close(writer)
                    state.withLock { $0.wrote = true }
                }
                Thread.sleep(forTimeInterval: 0.05)
            }
        }
        for (events, pressure) in [(fifo.path, nil), (nil, fifo.path), (directory.path, "/dev/null")] {
            let monitor = MemoryPressureMonitor(memoryEventsPath: events, pressurePath: pressure, interval: 3600, polls: false)
            #expect(!monitor.checkNow())
        }
        let unblocked = state.withLock { state in
            state.done = true
            return state.wrote
        }
        #expect(!unblocked, "checkNow waited on the FIFO until a writer came")
    }

    @Test func monitorReadsFilesAndSignals() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-mp-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let events = directory.appendingPathComponent("memory.events")
        try Data("low 0\nhigh 1\nmax 0\noom 0\noom_kill 0\n".utf8).write(to: events)
        let monitor = MemoryPressureMonitor(memoryEventsPath: events.path, pressurePath: nil, interval: 3600, polls: false)
        let cache = AutoPurgingImageCache(purgesOnMemoryPressure: false)
        cache.add(AutoPurgingImageCacheTests.logo, withIdentifier: "logo")
        let registration = monitor.addHandler { [cache] _ in cache.handleMemoryPressure() }
        defer { monitor.removeHandler(registration) }
        #expect(!monitor.checkNow())  // the baseline
        #expect(!monitor.checkNow())
        #expect(cache.memoryUsage == 1_020_000)
        try Data("low 0\nhigh 2\nmax 0\noom 0\noom_kill 0\n".utf8).write(to: events)
        #expect(monitor.checkNow())
        try await eventually { cache.memoryUsage == 0 }
    }
}
