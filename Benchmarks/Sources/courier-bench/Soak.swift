import ArgumentParser
import BenchSupport
import CourierTestServer
import Foundation
import Synchronization

/// `courier-bench soak`: many requests through the session layer (`URLSessionManager`, as
/// `courier-session` in the comparison) with a sliding window of requests in flight, sampling
/// the process's RSS and open descriptors every `--sample-every` requests, then the
/// least-squares slope of each over the samples after `--warmup` requests. A leak shows as a
/// slope that stays positive however long the run; a bounded cache or pool shows as a flat line
/// after warm-up.
struct Soak: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "soak",
        abstract: "Send many requests through the session layer and report RSS and fd slopes."
    )

    @Option(help: "Requests to send.") var requests = 1_000_000
    @Option(help: "Requests in flight at any time.") var concurrency = 64
    @Option(help: "Connections per host the session may open.") var connections = 64
    @Option(help: "Take a sample every this many finished requests.") var sampleEvery = 10_000
    @Option(help: "Leave the samples before this many requests out of the slopes (pools and caches fill up).")
    var warmup = 50_000
    @Option(help: "The URL to GET; default: the in-process test server's /json.") var url: String?
    @Option(help: "Write the samples and slopes to this JSON file.") var json: String?

    func validate() throws {
        guard requests > 0, concurrency > 0, connections > 0, sampleEvery > 0, warmup >= 0 else {
            throw ValidationError("--requests, --concurrency, --connections and --sample-every must be positive")
        }
    }

    func run() async throws {
        let server: TestServer? = url == nil ? try await TestServer.start() : nil
        let target: URL
        if let url {
            guard let parsed = URL(string: url) else { throw ValidationError("bad --url \(url)") }
            target = parsed
        } else if let server {
            target = server.baseURL.appendingPathComponent("json")
        } else {
            throw ValidationError("no URL")
        }
        log("courier-bench soak: \(requests) GETs of \(target.absoluteString), \(concurrency) in flight, sample every \(sampleEvery)")

        let client = CourierSessionClient(connections: connections)
        let progress = Progress()
        let start = ContinuousClock.now
        var samples = [Self.sample(requests: 0, start: start)]
        log(Self.describe(samples[0]))

        await withTaskGroup(of: Void.self) { group in
            var next = 0
            var finished = 0
            func add(_ index: Int) {
                group.addTask {
                    do {
                        _ = try await client.get(target)
                    } catch {
                        progress.fail(index, error)
                    }
                }
            }
            while next < min(concurrency, requests) {
                add(next)
                next += 1
            }
            while await group.next() != nil {
                finished += 1
                if finished % sampleEvery == 0 || finished == requests {
                    let sample = Self.sample(requests: finished, start: start)
                    samples.append(sample)
                    log(Self.describe(sample))
                }
                if next < requests {
                    add(next)
                    next += 1
                }
            }
        }
        let seconds = (ContinuousClock.now - start).seconds
        await client.shutdown()
        try await server?.shutdown()

        let trended = samples.filter { $0.requests >= warmup }
        let rssSlope = SoakTrend.rssKiBPer100k(trended)
        let fdSlope = SoakTrend.fdsPer100k(trended)
        let errors = progress.failed.load(ordering: .relaxed)
        let errorSamples = progress.samples.withLock { $0 }

        print("requests  seconds   VmRSS KiB  open fds")
        for sample in samples {
            print(
                String(sample.requests).padding(toLength: 10, withPad: " ", startingAt: 0)
                    + String(format: "%7.1f", sample.seconds)
                    + String(format: "%12lld", sample.rssKiB)
                    + String(format: "%10d", sample.openFDs)
            )
        }
        func show(_ value: Double?) -> String { value.map { String(format: "%.1f", $0) } ?? "n/a" }
        print(
            "\(requests) requests in \(String(format: "%.1f", seconds)) s (\(String(format: "%.0f", Double(requests) / seconds)) req/s), "
                + "\(errors) errors; over the \(trended.count) samples from \(warmup) requests on: "
                + "RSS slope \(show(rssSlope)) KiB per 100k requests, fd slope \(show(fdSlope)) per 100k requests"
        )
        for line in errorSamples { print("  \(line)") }

        if let json {
            let report = SoakReport(
                url: target.absoluteString, requests: requests, concurrency: concurrency, seconds: seconds,
                errors: errors, errorSamples: errorSamples, warmup: warmup, samples: samples,
                rssKiBPer100kRequests: rssSlope, fdsPer100kRequests: fdSlope
            )
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            try encoder.encode(report).write(to: URL(fileURLWithPath: json))
        }
        if errors > 0 { throw ExitCode(1) }
    }

    static func sample(requests: Int, start: ContinuousClock.Instant) -> SoakSample {
        SoakSample(
            requests: requests,
            rssKiB: residentKiB(),
            openFDs: (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? -1,
            seconds: (ContinuousClock.now - start).seconds
        )
    }

    static func describe(_ sample: SoakSample) -> String {
        "soak: \(sample.requests) requests, \(String(format: "%.1f", sample.seconds)) s, VmRSS \(sample.rssKiB) KiB, \(sample.openFDs) fds"
    }

    /// VmRSS from /proc/self/status, KiB (the current resident set, not the peak), or -1.
    static func residentKiB() -> Int64 {
        guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let line = text.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") })
        else { return -1 }
        return line.split(separator: " ").dropFirst().first.flatMap { Int64($0) } ?? -1
    }
}

/// What `soak --json` writes.
struct SoakReport: Codable {
    var url: String
    var requests: Int
    var concurrency: Int
    var seconds: Double
    var errors: Int
    var errorSamples: [String]
    var warmup: Int
    var samples: [SoakSample]
    var rssKiBPer100kRequests: Double?
    var fdsPer100kRequests: Double?
}
