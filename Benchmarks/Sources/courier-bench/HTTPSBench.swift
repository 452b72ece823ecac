import ArgumentParser
import AsyncHTTPClient
import CourierEngine
import Foundation
import NIOCore
import NIOPosix
import NIOSSL

/// `courier-bench https`: TLS against nginx (`nginx/setup-tls.sh start`), HTTP/2 and HTTP/1.1,
/// CourierEngine, Courier's session layer and AsyncHTTPClient in the same process and rounds:
/// small GETs 64 in flight and one at a time (requests per second, process CPU per request)
/// and a 256 MiB download streamed to a file (MB/s, CPU per MiB). Rounds interleave the
/// clients; each row is the median round with the min–max range.
/// The target: over HTTP/2, 64 in flight on one connection, ≥ 1.3× AHC's req/s with
/// less CPU per request.
struct HTTPSBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "https",
        abstract: "TLS (HTTP/2 and HTTP/1.1): CourierEngine, the session and AsyncHTTPClient against nginx."
    )

    @Option(help: "The URL of a small document on the TLS nginx.")
    var url = "https://127.0.0.1:8443/json"
    @Option(help: "The URL of the 256 MiB file on the TLS nginx (setup.sh makes it); 'none' skips the download case.")
    var downloadURL = "https://127.0.0.1:8443/download-256m"
    @Option(help: "The PEM CA that issued nginx's certificate (setup-tls.sh makes it).")
    var ca = "/tmp/courier-bench-nginx-tls/tls/ca.pem"
    @Option(help: "Requests per measurement for the concurrent case.")
    var requests = 20_000
    @Option(help: "Requests per measurement for the sequential case.")
    var sequentialRequests = 2_000
    @Option(help: "Requests in flight for the concurrent case.")
    var concurrency = 64
    @Option(help: "Rounds (the clients interleave in each); each row reports the median round and the range.")
    var rounds = 3
    @Option(
        help: """
            Clients, comma-separated: courier-engine, courier-engine-loop (workers on HTTPEngine.taskExecutor), \
            courier-session, courier-session-loop (workers on URLSessionManager.taskExecutor), async-http-client.
            """
    )
    var clients = "courier-engine,courier-engine-loop,courier-session,courier-session-loop,async-http-client"

    enum WireProtocol: String, CaseIterable { case h2, http11 = "http/1.1" }

    /// One measured case: small GETs `count` times with `inFlight` workers, or one download.
    enum Measured {
        case small(name: String, count: Int, inFlight: Int)
        case download(URL)
    }

    func run() async throws {
        let pem = try String(contentsOfFile: ca, encoding: .utf8)
        let der = try Self.der(fromPEM: pem)
        guard let target = URL(string: url) else { throw ValidationError("bad --url") }
        var cases: [Measured] = [
            .small(name: "concurrent-64", count: requests, inFlight: concurrency),
            .small(name: "sequential", count: sequentialRequests, inFlight: 1),
        ]
        if downloadURL != "none" {
            guard let download = URL(string: downloadURL) else { throw ValidationError("bad --download-url") }
            cases.append(.download(download))
        }
        let names = clients.split(separator: ",").map { String($0).trimmingCharacters(in: .whitespaces) }
        print("courier-bench https: \(url), \(concurrency) in flight × \(requests), sequential × \(sequentialRequests), "
            + "download \(downloadURL), \(rounds) rounds")
        print("Rounds interleave the clients (A B C, A B C, …); each row is the median round, with the min–max rate.")
        print("client               protocol  case               median    min–max             unit    cpu/unit (median)  conns")
        for proto in WireProtocol.allCases {
            let tls = BenchTLS(caPath: ca, caDER: der, allowsHTTP2: proto == .h2)
            for measured in cases {
                var results: [String: [(rate: Double, cpu: Double, conns: Int)]] = [:]
                for _ in 0..<rounds {
                    for clientName in names {
                        results[clientName, default: []].append(try await measure(client: clientName, tls: tls, url: target, measured))
                    }
                }
                for clientName in names {
                    guard let rows = results[clientName], !rows.isEmpty else { continue }
                    let byRate = rows.sorted { $0.rate < $1.rate }
                    let median = byRate[byRate.count / 2]
                    let caseName: String
                    let units: (String, String)
                    switch measured {
                    case .small(let name, _, _):
                        caseName = name
                        units = ("req/s", "µs/req")
                    case .download:
                        caseName = "download-256m"
                        units = ("MB/s", "µs/MiB")
                    }
                    let range = String(format: "%.0f–%.0f", byRate.first?.rate ?? 0, byRate.last?.rate ?? 0)
                    print(
                        clientName.padding(toLength: 21, withPad: " ", startingAt: 0)
                            + proto.rawValue.padding(toLength: 10, withPad: " ", startingAt: 0)
                            + caseName.padding(toLength: 14, withPad: " ", startingAt: 0)
                            + String(format: "%11.0f  ", median.rate) + range.padding(toLength: 20, withPad: " ", startingAt: 0)
                            + units.0.padding(toLength: 6, withPad: " ", startingAt: 0)
                            + String(format: "%8.1f ", median.cpu) + units.1.padding(toLength: 12, withPad: " ", startingAt: 0)
                            + String(format: "%5d", median.conns))
                }
            }
        }
    }

    private static func makeClient(_ name: String, connections: Int, tls: BenchTLS) throws -> any BenchClient {
        switch name {
        case "courier-engine": return try CourierEngineClient(connections: connections, tls: tls)
        case "courier-engine-loop": return try CourierEngineClient(connections: connections, tls: tls, tasksOnLoop: true)
        case "courier-session": return CourierSessionClient(connections: connections, tls: tls)
        case "courier-session-loop": return CourierSessionClient(connections: connections, tls: tls, tasksOnLoop: true)
        case "async-http-client": return AsyncHTTPClientClient(connections: connections, tls: tls)
        default:
            throw ValidationError(
                "unknown client \(name) (courier-engine, courier-engine-loop, courier-session, courier-session-loop, async-http-client)")
        }
    }

    private func measure(client name: String, tls: BenchTLS, url: URL, _ measured: Measured) async throws
        -> (rate: Double, cpu: Double, conns: Int)
    {
        switch measured {
        case .small(_, let count, let inFlight):
            let client = try Self.makeClient(name, connections: inFlight, tls: tls)
            let get: @Sendable () async throws -> Void = {
                guard try await client.get(url) > 0 else { throw BenchError.status(0, url) }
            }
            let executor = (client as? CourierEngineClient)?.taskExecutor ?? (client as? CourierSessionClient)?.taskExecutor
            // Warm-up: connections open, TLS done, code paths hot.
            try await Self.drive(get, count: inFlight * 4, inFlight: inFlight, on: executor)
            let cpuBefore = Self.cpuSeconds()
            let start = DispatchTime.now().uptimeNanoseconds
            try await Self.drive(get, count: count, inFlight: inFlight, on: executor)
            let elapsed = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
            let cpu = Self.cpuSeconds() - cpuBefore
            let conns = (client as? CourierEngineClient)?.engine.openConnectionCount ?? -1
            await client.shutdown()
            return (Double(count) / elapsed, cpu / Double(count) * 1e6, conns)
        case .download(let downloadURL):
            let client = try Self.makeClient(name, connections: 1, tls: tls)
            // Warm-up: the connection and TLS, with a small GET.
            _ = try await client.get(url)
            let path = NSTemporaryDirectory() + "courier-bench-https-\(UUID().uuidString)"
            defer { try? FileManager.default.removeItem(atPath: path) }
            let cpuBefore = Self.cpuSeconds()
            let start = DispatchTime.now().uptimeNanoseconds
            let bytes = try await client.download(downloadURL, to: path)
            let elapsed = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
            let cpu = Self.cpuSeconds() - cpuBefore
            await client.shutdown()
            guard bytes > 0 else { throw BenchError.status(0, downloadURL) }
            let mebibytes = Double(bytes) / Double(1 << 20)
            return (Double(bytes) / elapsed / 1e6, cpu / mebibytes * 1e6, 1)
        }
    }

    /// Runs `count` calls with `inFlight` workers pulling from a shared counter; the workers
    /// run on `executor` when given (else on the cooperative pool).
    private static func drive(
        _ get: @escaping @Sendable () async throws -> Void, count: Int, inFlight: Int, on executor: (any TaskExecutor)?
    ) async throws {
        let tickets = RequestTickets(count: count)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<inFlight {
                group.addTask(executorPreference: executor) {
                    while tickets.take() != nil { try await get() }
                }
            }
            try await group.waitForAll()
        }
    }

    private static func cpuSeconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6 + Double(usage.ru_stime.tv_sec)
            + Double(usage.ru_stime.tv_usec) / 1e6
    }

    static func der(fromPEM pem: String) throws -> [UInt8] {
        let body = pem.split(separator: "\n").filter { !$0.hasPrefix("-----") }.joined()
        guard let data = Data(base64Encoded: body) else { throw ValidationError("--ca is not a PEM certificate") }
        return Array(data)
    }
}
