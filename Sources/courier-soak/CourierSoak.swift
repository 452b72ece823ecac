import ArgumentParser
import Courier
import CourierTestServer
import Crypto
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

/// CI's soak (`.ci/run`, `scripts/soak.sh`): many small GETs through the session layer with a
/// sliding window in flight, then one large upload and one large download, all against the
/// in-process test server on loopback. Prints what it measured and exits non-zero when
///   - any request fails (an error, a status other than 200, a wrong body);
///   - the peak RSS of the GETs' last quarter is more than `--rss-growth-limit` percent above
///     the peak of their first quarter;
///   - the open descriptors grow: the last quarter's peak above the first quarter's, or more
///     descriptors open once the session is invalidated than before it was made (beyond two
///     the process opens once);
///   - a transfer raises the process's peak RSS by half its size or more (it was not streamed).
/// RSS and descriptors are sampled every `--sample-every` finished GETs (VmRSS and the
/// entries of /proc/self/fd; the test server runs in this process, so both count it too).
@main
struct CourierSoak: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "courier-soak",
        abstract: "Small GETs, a large upload and a large download through the session; fails on growth or errors."
    )

    @Option(help: "Small GETs to send.") var requests = 200_000
    @Option(help: "GETs in flight at any time.") var concurrency = 64
    @Option(help: "Sample RSS and descriptors every this many finished GETs.") var sampleEvery = 1_000
    @Option(name: .customLong("transfer-mib"), help: "Size of the upload and of the download, MiB (0: no transfers).") var transferMiB = 256
    @Option(help: "Allowed growth of the peak RSS from the first to the last quarter, percent.") var rssGrowthLimit = 10.0

    func validate() throws {
        guard requests >= 4, concurrency > 0, sampleEvery > 0, transferMiB >= 0, rssGrowthLimit >= 0 else {
            throw ValidationError("--requests must be at least 4; --concurrency and --sample-every positive")
        }
    }

    func run() async throws {
        let started = ContinuousClock.now
        let server = try await TestServer.start()
        let failures = Failures()
        // One request on a session of its own first: what the process opens once and keeps
        // (Dispatch's event descriptors, the event loops) is then open before the baseline.
        try await warmUp(server: server)
        let baseline = Sample.now(requests: 0)
        print("courier-soak: \(requests) GETs of \(server.baseURL.absoluteString)/json, \(concurrency) in flight, "
            + "then a \(transferMiB) MiB upload and a \(transferMiB) MiB download; before: \(baseline.rssKiB) KiB RSS, \(baseline.openFDs) fds")

        var configuration = SessionConfiguration()
        configuration.httpMaximumConnectionsPerHost = concurrency
        let manager = URLSessionManager(configuration: configuration)
        manager.responseSerializer = HTTPResponseSerializer()

        let samples = try await getPhase(manager: manager, server: server, failures: failures)
        let afterGETs = Sample.now(requests: requests)

        var transfers: [String] = []
        if transferMiB > 0 {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-soak-\(getpid())")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            transfers.append(try await upload(manager: manager, server: server, directory: directory, failures: failures))
            transfers.append(try await download(manager: manager, server: server, directory: directory, failures: failures))
        }
        let afterTransfers = Sample.now(requests: requests)

        await manager.invalidateSession(cancelingTasks: false)
        // The server closes its side of each connection when it sees the client's close.
        var afterInvalidation = Sample.now(requests: requests)
        let settleDeadline = ContinuousClock.now + .seconds(10)
        while afterInvalidation.openFDs > baseline.openFDs + Self.onceOpenedDescriptors, ContinuousClock.now < settleDeadline {
            try await Task.sleep(for: .milliseconds(50))
            afterInvalidation = Sample.now(requests: requests)
        }
        try await server.shutdown()

        // The quarters of the GET phase, by finished requests.
        let quarter = requests / 4
        let first = samples.filter { $0.requests > 0 && $0.requests <= quarter }
        let last = samples.filter { $0.requests > requests - quarter }
        let firstRSS = first.map(\.rssKiB).max() ?? -1
        let lastRSS = last.map(\.rssKiB).max() ?? -1
        let firstFDs = first.map(\.openFDs).max() ?? -1
        let lastFDs = last.map(\.openFDs).max() ?? -1
        let growth = firstRSS > 0 ? Double(lastRSS - firstRSS) / Double(firstRSS) * 100 : .infinity
        let getSeconds = afterGETs.seconds(since: baseline)

        print("GETs: \(requests) in \(format(getSeconds)) s (\(format(Double(requests) / getSeconds, digits: 0)) req/s), \(failures.count) errors")
        print("  samples (every \(sampleEvery) GETs): first quarter \(first.count), last quarter \(last.count)")
        print("  peak RSS: first quarter \(firstRSS) KiB, last quarter \(lastRSS) KiB (\(format(growth, digits: 2)) %, limit \(format(rssGrowthLimit)) %)")
        print("  peak open fds: first quarter \(firstFDs), last quarter \(lastFDs)")
        print("  after the GETs: \(afterGETs.rssKiB) KiB RSS (\(afterGETs.peakKiB) KiB peak), \(afterGETs.openFDs) fds")
        for line in transfers { print(line) }
        print("after the transfers: \(afterTransfers.rssKiB) KiB RSS (\(afterTransfers.peakKiB) KiB peak), \(afterTransfers.openFDs) fds")
        print("after invalidating the session: \(afterInvalidation.openFDs) fds (\(baseline.openFDs) before it was made)")

        if first.isEmpty || last.isEmpty { failures.record("too few samples for quarters: lower --sample-every") }
        if growth > rssGrowthLimit {
            failures.record("peak RSS grew \(format(growth, digits: 2)) % from the first quarter to the last (limit \(format(rssGrowthLimit)) %)")
        }
        if lastFDs > firstFDs { failures.record("open descriptors grew: peak \(firstFDs) in the first quarter, \(lastFDs) in the last") }
        // A couple of descriptors the process opens once (for the 64-connection phase's second
        // event loop's work, a thread pool's wake-up descriptor) are not a leak; a leak of the
        // session's connections or files would leave tens (64 connections, the transfer files).
        if afterInvalidation.openFDs > baseline.openFDs + Self.onceOpenedDescriptors {
            failures.record("\(afterInvalidation.openFDs) descriptors open after the session was invalidated, \(baseline.openFDs) before it was made")
        }

        let total = (ContinuousClock.now - started).soakSeconds
        let problems = failures.all
        if problems.isEmpty {
            print("courier-soak: passed in \(format(total)) s")
        } else {
            print("courier-soak: FAILED in \(format(total)) s (\(failures.count) problems; the first \(problems.count)):")
            for problem in problems { print("  \(problem)") }
            throw ExitCode(1)
        }
    }

    /// Descriptors allowed above the baseline once the session is invalidated (see `run`).
    static let onceOpenedDescriptors = 2

    private func warmUp(server: TestServer) async throws {
        guard let url = URL(string: server.baseURL.absoluteString + "/json"),
            let uploadURL = URL(string: server.baseURL.absoluteString + "/upload"),
            let downloadURL = URL(string: server.baseURL.absoluteString + "/download/65536")
        else { throw ValidationError("bad server URL") }
        let manager = URLSessionManager()
        manager.responseSerializer = HTTPResponseSerializer()
        _ = try await manager.data(for: URLRequest(url: url))
        // A small file upload and download task too: what the process opens once for file
        // bodies and download files (thread pools, their wake-up descriptors) is then counted
        // in the baseline, not as a leak after the large transfers.
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("courier-soak-warm-\(getpid()).bin")
        try Data(repeating: 0x61, count: 65_536).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        var upload = URLRequest(url: uploadURL)
        upload.httpMethod = "POST"
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            manager.uploadTask(with: upload, fromFile: file, completionHandler: { _, _, _ in continuation.resume() }).resume()
        }
        let destination = file.appendingPathExtension("download")
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            manager.downloadTask(
                with: URLRequest(url: downloadURL), destination: { _, _ in destination },
                completionHandler: { _, _, _ in continuation.resume() }
            ).resume()
        }
        try? FileManager.default.removeItem(at: destination)
        await manager.invalidateSession(cancelingTasks: false)
    }

    // MARK: - Small GETs

    /// The GETs, `concurrency` at a time; returns the samples (the first at 0 requests).
    private func getPhase(manager: URLSessionManager, server: TestServer, failures: Failures) async throws -> [Sample] {
        guard let url = URL(string: server.baseURL.absoluteString + "/json") else { throw ValidationError("bad server URL") }
        let request = URLRequest(url: url)
        var samples = [Sample.now(requests: 0)]
        let requests = self.requests
        await withTaskGroup(of: Void.self) { group in
            var started = 0
            var finished = 0
            func add() {
                group.addTask {
                    do {
                        let (object, response) = try await manager.data(for: request)
                        let count = (object as? Data)?.count ?? 0
                        if response.statusCode != 200 || count == 0 {
                            failures.record("GET /json: status \(response.statusCode), \(count) bytes")
                        }
                    } catch {
                        failures.record("GET /json: \(error)")
                    }
                }
                started += 1
            }
            while started < min(concurrency, requests) { add() }
            while await group.next() != nil {
                finished += 1
                if finished % sampleEvery == 0 || finished == requests {
                    samples.append(Sample.now(requests: finished))
                }
                if finished % (requests / 4) == 0 {
                    print("  \(finished) GETs: \(samples[samples.count - 1].describe)")
                }
                if started < requests { add() }
            }
        }
        return samples
    }

    // MARK: - Transfers

    private var transferBytes: Int64 { Int64(transferMiB) << 20 }

    /// Uploads a file of `transferMiB` MiB to /upload (streamed from disk); the server's SHA-256
    /// and byte count must match the file's.
    private func upload(manager: URLSessionManager, server: TestServer, directory: URL, failures: Failures) async throws -> String {
        let file = directory.appendingPathComponent("upload.bin")
        let digest = try Self.writeFile(at: file, mebibytes: transferMiB)
        guard let url = URL(string: server.baseURL.absoluteString + "/upload") else { throw ValidationError("bad server URL") }
        var request = URLRequest(url: url)
        request.httpMethod = "POST"
        request.setValue("application/octet-stream", forHTTPHeaderField: "Content-Type")
        let before = Sample.now(requests: requests)
        let (object, error): ((any Sendable)?, (any Error)?) = await withCheckedContinuation { continuation in
            manager.uploadTask(
                with: request, fromFile: file,
                completionHandler: { _, object, error in continuation.resume(returning: (object, error)) }
            ).resume()
        }
        let after = Sample.now(requests: requests)
        try? FileManager.default.removeItem(at: file)
        if let error {
            failures.record("upload: \(error)")
        } else {
            struct Reply: Decodable { var bytes: Int64; var sha256: String }
            let reply = (object as? Data).flatMap { try? JSONDecoder().decode(Reply.self, from: $0) }
            let bytes = reply?.bytes
            let serverDigest = reply?.sha256
            if bytes != transferBytes || serverDigest != digest {
                failures.record("upload: the server got \(bytes.map(String.init) ?? "?") bytes with SHA-256 \(serverDigest ?? "?"); sent \(transferBytes), \(digest)")
            }
        }
        checkStreamed("upload", before: before, after: after, failures: failures)
        return transferLine("upload", before: before, after: after)
    }

    /// Downloads `transferMiB` MiB from /download/N to a file; it must have the server's a…z pattern.
    private func download(manager: URLSessionManager, server: TestServer, directory: URL, failures: Failures) async throws -> String {
        let destination = directory.appendingPathComponent("download.bin")
        guard let url = URL(string: server.baseURL.absoluteString + "/download/\(transferBytes)") else {
            throw ValidationError("bad server URL")
        }
        let before = Sample.now(requests: requests)
        let (location, error): (URL?, (any Error)?) = await withCheckedContinuation { continuation in
            manager.downloadTask(
                with: URLRequest(url: url), destination: { _, _ in destination },
                completionHandler: { _, location, error in continuation.resume(returning: (location, error)) }
            ).resume()
        }
        let after = Sample.now(requests: requests)
        if let error {
            failures.record("download: \(error)")
        } else if let location {
            if let problem = Self.checkAlphabetPattern(at: location, size: transferBytes) { failures.record("download: \(problem)") }
            try? FileManager.default.removeItem(at: location)
        } else {
            failures.record("download: finished without a file")
        }
        checkStreamed("download", before: before, after: after, failures: failures)
        return transferLine("download", before: before, after: after)
    }

    private func checkStreamed(_ name: String, before: Sample, after: Sample, failures: Failures) {
        let limitKiB = transferBytes / 1024 / 2
        if after.peakKiB - before.peakKiB >= limitKiB {
            failures.record("\(name): the peak RSS rose \(after.peakKiB - before.peakKiB) KiB, half the transfer is \(limitKiB) KiB")
        }
    }

    private func transferLine(_ name: String, before: Sample, after: Sample) -> String {
        let seconds = after.seconds(since: before)
        return "\(name): \(transferMiB) MiB in \(format(seconds)) s (\(format(Double(transferMiB) / seconds, digits: 0)) MiB/s); "
            + "peak RSS \(before.peakKiB) → \(after.peakKiB) KiB, \(after.openFDs) fds after"
    }

    /// Writes `mebibytes` MiB of deterministic pseudo-random bytes; returns their SHA-256 (hex).
    static func writeFile(at url: URL, mebibytes: Int) throws -> String {
        guard FileManager.default.createFile(atPath: url.path, contents: nil),
            let handle = FileHandle(forWritingAtPath: url.path)
        else { throw ValidationError("cannot create \(url.path)") }
        defer { try? handle.close() }
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        var block = [UInt8](repeating: 0, count: 1 << 20)
        for index in block.indices {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            block[index] = UInt8(truncatingIfNeeded: state >> 56)
        }
        var hasher = SHA256()
        for chunk in 0..<mebibytes {
            block[0] = UInt8(truncatingIfNeeded: chunk)  // no two MiB alike
            let data = Data(block)
            hasher.update(data: data)
            try handle.write(contentsOf: data)
        }
        return hasher.finalize().map { String(format: "%02x", $0) }.joined()
    }

    /// nil when the file at `url` has `size` bytes of the server's repeating a…z; else what differs.
    static func checkAlphabetPattern(at url: URL, size: Int64) -> String? {
        guard let handle = FileHandle(forReadingAtPath: url.path) else { return "cannot read \(url.path)" }
        defer { try? handle.close() }
        let chunkSize = 1 << 20
        let alphabet = Array("abcdefghijklmnopqrstuvwxyz".utf8)
        let pattern = Data((0..<(chunkSize + 26)).map { alphabet[$0 % 26] })
        var offset: Int64 = 0
        while offset < size {
            let count = Int(min(Int64(chunkSize), size - offset))
            guard let chunk = try? handle.read(upToCount: count), chunk.count == count else { return "the file ends early, at byte \(offset)" }
            let shift = Int(offset % 26)
            guard chunk == pattern[shift..<(shift + count)] else { return "the bytes at offset \(offset) are not the server's pattern" }
            offset += Int64(count)
        }
        if let extra = try? handle.read(upToCount: 1), !extra.isEmpty { return "the file is longer than \(size) bytes" }
        return nil
    }
}

/// One reading of this process: resident and peak RSS (KiB, from /proc/self/status) and open
/// descriptors (entries of /proc/self/fd), after `requests` finished GETs.
struct Sample: Sendable {
    var requests: Int
    var rssKiB: Int64
    var peakKiB: Int64
    var openFDs: Int
    var time: ContinuousClock.Instant

    static func now(requests: Int) -> Sample {
        let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
        func field(_ name: String) -> Int64 {
            guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix(name) }) else { return -1 }
            return line.split(separator: " ").dropFirst().first.flatMap { Int64($0) } ?? -1
        }
        let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count).map { $0 - 1 } ?? -1  // less the directory's own
        return Sample(requests: requests, rssKiB: field("VmRSS:"), peakKiB: field("VmHWM:"), openFDs: fds, time: .now)
    }

    func seconds(since earlier: Sample) -> Double { (time - earlier.time).soakSeconds }

    var describe: String { "\(rssKiB) KiB RSS (\(peakKiB) KiB peak), \(openFDs) fds" }
}

/// The problems found, from any task: counted, and the first few kept.
final class Failures: Sendable {
    private let state = Mutex<(count: Int, kept: [String])>((0, []))

    func record(_ problem: String) {
        state.withLock { state in
            state.count += 1
            if state.kept.count < 20 { state.kept.append(problem) }
        }
    }

    var count: Int { state.withLock { $0.count } }
    var all: [String] { state.withLock { $0.kept } }
}

func format(_ value: Double, digits: Int = 1) -> String { String(format: "%.\(digits)f", value) }

extension Duration {
    var soakSeconds: Double {
        let (whole, fraction) = components
        return Double(whole) + Double(fraction) / 1e18
    }
}
