import ArgumentParser
import BenchSupport
import Foundation
import NIOCore
import Synchronization

/// What a child process reports to the parent: one JSON line on stdout.
struct ChildReport: Codable, Sendable {
    var client: ClientKind
    var benchCase: BenchCase
    /// Requests attempted.
    var requests: Int
    /// Requests that failed (error thrown, wrong status, wrong size).
    var errors: Int
    /// The first few errors, with the request index.
    var errorSamples: [String]
    /// Body bytes received (GETs, download) or bytes the server says it read (upload).
    var bytes: Int64
    /// The server's SHA-256 of an upload.
    var uploadSHA256: String?
    /// Wall time of the workload alone.
    var seconds: Double
    /// getrusage(RUSAGE_SELF) user + system time of the workload alone.
    var cpuMicros: Int64
    /// Peak RSS (VmHWM) at the end of the process's work, KiB.
    var peakRSSKiB: Int64
    /// Peak RSS (VmHWM) before the client was created (the binary and runtime alone), KiB.
    var baselineRSSKiB: Int64
    /// The workload did not finish within `--timeout`.
    var timedOut: Bool
    /// With `--latency`: the median and 99th percentile of the measured requests' latencies
    /// (from the call to its answer), µs; nil otherwise.
    var latencyP50Micros: Double? = nil
    var latencyP99Micros: Double? = nil
    /// Requests sent before the measurement (`--warmup`), not counted in `requests`.
    var warmupRequests: Int? = nil
}

/// Counts finished requests so that the watchdog can tell how far a hung run got.
final class Progress: Sendable {
    let finished = Atomic<Int>(0)
    let failed = Atomic<Int>(0)
    let samples = Mutex<[String]>([])

    func fail(_ index: Int, _ error: any Error) {
        failed.add(1, ordering: .relaxed)
        samples.withLock { samples in
            if samples.count < 5 { samples.append("request #\(index): \(String(describing: error))") }
        }
    }
}

/// `courier-bench run-one`: one client, one case, in this process; prints a ``ChildReport``.
/// The parent runs each measurement this way so that CPU and peak RSS are the client's alone.
struct RunOne: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run-one",
        abstract: "Run one client on one case in this process and print a JSON report (used by `run`)."
    )

    @Option(help: "courier-engine, courier-session, async-http-client, urlsession, or the references curl and wrk.") var client: ClientKind
    @Option(name: .customLong("case"), help: "The workload.") var benchCase: BenchCase
    @Option(help: "The URL to GET (small cases, download) or POST to (upload).") var url: String
    @Option(help: "Requests for the small cases.") var requests: Int?
    @Option(help: "Requests in flight for concurrent-small.") var concurrency = 64
    @Option(help: "Connections per host every client may open.") var connections = 64
    @Option(help: "Upload size in bytes.") var uploadBytes: Int64 = 256 << 20
    @Option(help: "Upload chunk size in bytes.") var chunkSize = 64 << 10
    @Option(help: "Download destination file.") var output: String?
    @Option(help: "File with the upload bytes (URLSession uploads from a file).") var uploadFile: String?
    @Option(help: "Give up after this many seconds and report a hang.") var timeout: Double = 600
    @Option(help: "wrk's run length in seconds (it runs for a time, not a request count).") var duration: Double = 5
    @Option(help: "concurrent-small: requests sent with the same window before the measurement starts (they open the connections), not measured.") var warmup = 0
    @Flag(help: "concurrent-small: time every request and report the median and 99th percentile latency (wrk: --latency).") var latency = false
    @Option(help: "wrk's threads (-t; at most one per connection).") var wrkThreads = 1
    @Option(help: "wrk's --timeout in seconds: slower answers count as socket errors (timeout) and leave its latency distribution (wrk's default: 2).") var wrkTimeout: Double?

    func run() async throws {
        guard let url = URL(string: url) else { throw ValidationError("bad --url \(url)") }
        // A descriptor per connection: thousands in flight need more than the usual 1,024.
        OpenFileLimit.raise(to: UInt64(max(connections, concurrency)) * 2 + 1_024)
        if self.client.isReference {
            Self.emit(try referenceReport(url))
            return
        }
        let baselineRSS = ResourceUsage.peakRSSKiB()
        let client: any BenchClient
        switch self.client {
        case .courierEngine: client = try CourierEngineClient(connections: connections)
        case .courierSession: client = CourierSessionClient(connections: connections)
        case .courierSessionHTTPTypes: client = CourierSessionHTTPTypesClient(connections: connections)
        case .courierSessionTyped: client = CourierSessionTypedClient(connections: connections)
        case .courierSessionMonitor: client = CourierSessionClient(connections: connections, monitor: NoOpMonitor(receivesTaskEvents: false))
        case .courierSessionEvents: client = CourierSessionClient(connections: connections, monitor: NoOpMonitor(receivesTaskEvents: true))
        case .asyncHTTPClient: client = AsyncHTTPClientClient(connections: connections)
        case .urlSession: client = URLSessionClient(connections: connections)
        case .curl, .wrk: throw ValidationError("\(self.client.rawValue) is a reference client")
        }
        let requestCount = benchCase.isRequestRate ? (requests ?? benchCase.defaultRequests) : 1
        let progress = Progress()
        let chunk = RepeatedChunks.patternChunk(size: chunkSize)
        if benchCase == .concurrentSmall, warmup > 0 {
            // Its failures count; its bytes are not checked (the measured requests' are).
            _ = await Self.concurrent(client, url, count: warmup, inFlight: concurrency, progress: progress)
        }

        let start = ContinuousClock.now
        let before = ResourceUsage.current()
        let template = ChildReport(
            client: self.client, benchCase: benchCase, requests: requestCount, errors: 0,
            errorSamples: [], bytes: 0, uploadSHA256: nil, seconds: 0, cpuMicros: 0,
            peakRSSKiB: 0, baselineRSSKiB: baselineRSS, timedOut: false,
            warmupRequests: benchCase == .concurrentSmall && warmup > 0 ? warmup : nil
        )
        let watchdogTimeout = timeout
        Thread.detachNewThread {
            Thread.sleep(forTimeInterval: watchdogTimeout)
            var report = template
            report.timedOut = true
            report.seconds = (ContinuousClock.now - start).seconds
            report.errors = progress.failed.load(ordering: .relaxed)
            report.errorSamples = progress.samples.withLock { $0 } + [
                "timed out after \(watchdogTimeout) s with \(progress.finished.load(ordering: .relaxed)) of \(requestCount) requests finished"
            ]
            report.cpuMicros = ResourceUsage.current().cpuMicros - before.cpuMicros
            report.peakRSSKiB = ResourceUsage.peakRSSKiB()
            Self.emit(report)
            Foundation.exit(3)
        }

        var bytes: Int64 = 0
        var sha: String?
        var latencies: LatencyHistogram?
        switch benchCase {
        case .sequentialSmall:
            for index in 0..<requestCount {
                do {
                    bytes += Int64(try await client.get(url))
                } catch {
                    progress.fail(index, error)
                }
                progress.finished.add(1, ordering: .relaxed)
            }
        case .concurrentSmall:
            if latency {
                let timed = await Self.concurrentTimed(client, url, count: requestCount, inFlight: concurrency, progress: progress)
                bytes = timed.bytes
                latencies = timed.latencies
            } else {
                bytes = await Self.concurrent(client, url, count: requestCount, inFlight: concurrency, progress: progress)
            }
        case .download256m:
            guard let output else { throw ValidationError("download needs --output") }
            do {
                bytes = try await client.download(url, to: output)
            } catch {
                progress.fail(0, error)
            }
            progress.finished.add(1, ordering: .relaxed)
        case .upload256m:
            do {
                let answer = try await client.upload(url, length: uploadBytes, chunk: chunk, file: uploadFile)
                bytes = answer.bytes
                sha = answer.sha256
                if answer.bytes != uploadBytes {
                    progress.fail(0, BenchError.badAnswer("the server read \(answer.bytes) of \(uploadBytes) bytes"))
                }
            } catch {
                progress.fail(0, error)
            }
            progress.finished.add(1, ordering: .relaxed)
        }
        let after = ResourceUsage.current()
        let seconds = (ContinuousClock.now - start).seconds
        await client.shutdown()

        var report = template
        report.errors = progress.failed.load(ordering: .relaxed)
        report.errorSamples = progress.samples.withLock { $0 }
        report.bytes = bytes
        report.uploadSHA256 = sha
        report.seconds = seconds
        report.cpuMicros = after.cpuMicros - before.cpuMicros
        report.peakRSSKiB = ResourceUsage.peakRSSKiB()
        if let latencies {
            report.latencyP50Micros = latencies.value(atQuantile: 0.50).map { Double($0) / 1_000 }
            report.latencyP99Micros = latencies.value(atQuantile: 0.99).map { Double($0) / 1_000 }
        }
        Self.emit(report)
    }

    /// `count` GETs with `inFlight` outstanding at any time (a sliding window): `inFlight`
    /// workers, each sending the next request as soon as its last one is answered.
    ///
    /// Workers rather than a child task per request: the Swift runtime finds a finished child
    /// in a task group by walking the group's list of children, so with thousands in flight a
    /// child per request cost the harness more per request than some clients did (7.7 % of the
    /// engine's samples at 4,096 in flight went to `TaskGroup::removeChildTask`).
    static func concurrent(
        _ client: any BenchClient,
        _ url: URL,
        count: Int,
        inFlight: Int,
        progress: Progress
    ) async -> Int64 {
        let tickets = RequestTickets(count: count)
        return await withTaskGroup(of: Int64.self) { group in
            for _ in 0..<min(inFlight, count) {
                group.addTask {
                    var bytes: Int64 = 0
                    while let index = tickets.take() {
                        defer { progress.finished.add(1, ordering: .relaxed) }
                        do {
                            bytes += Int64(try await client.get(url))
                        } catch {
                            progress.fail(index, error)
                        }
                    }
                    return bytes
                }
            }
            var total: Int64 = 0
            for await bytes in group { total += bytes }
            return total
        }
    }

    static func emit(_ report: ChildReport) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        guard let data = try? encoder.encode(report) else { return }
        FileHandle.standardOutput.write(data + Data("\n".utf8))
    }
}
