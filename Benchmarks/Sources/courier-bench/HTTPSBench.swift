import ArgumentParser
import AsyncHTTPClient
import CourierEngine
import Foundation
import NIOCore
import NIOPosix
import NIOSSL

/// `courier-bench https`: small GETs over TLS against nginx (`nginx/setup-tls.sh start`),
/// HTTP/2 and HTTP/1.1, CourierEngine against AsyncHTTPClient, in the same process and rounds.
/// Reports requests per second and process CPU (user + system) per request, best round of
/// each. Issue 15's target: over HTTP/2, 64 in flight on one connection, ≥ 1.3× AHC's req/s
/// with less CPU per request.
struct HTTPSBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "https",
        abstract: "Small GETs over TLS (HTTP/2 and HTTP/1.1): CourierEngine vs AsyncHTTPClient against nginx."
    )

    @Option(help: "The URL of a small document on the TLS nginx.")
    var url = "https://127.0.0.1:8443/json"
    @Option(help: "The PEM CA that issued nginx's certificate (setup-tls.sh makes it).")
    var ca = "/tmp/courier-bench-nginx-tls/tls/ca.pem"
    @Option(help: "Requests per measurement for the concurrent case.")
    var requests = 20_000
    @Option(help: "Requests per measurement for the sequential case.")
    var sequentialRequests = 2_000
    @Option(help: "Requests in flight for the concurrent case.")
    var concurrency = 64
    @Option(help: "Rounds; the best of each row is reported.")
    var rounds = 3

    enum WireProtocol: String, CaseIterable { case h2, http11 = "http/1.1" }

    func run() async throws {
        let pem = try String(contentsOfFile: ca, encoding: .utf8)
        let der = try Self.der(fromPEM: pem)
        guard let target = URL(string: url) else { throw ValidationError("bad --url") }
        print("courier-bench https: \(url), \(concurrency) in flight × \(requests), sequential × \(sequentialRequests), \(rounds) rounds")
        print("client             protocol  case          req/s      cpu µs/req  conns")
        for proto in WireProtocol.allCases {
            for clientName in ["courier-engine", "async-http-client"] {
                for (caseName, count, inFlight) in [("concurrent-64", requests, concurrency), ("sequential", sequentialRequests, 1)] {
                    var best: (rate: Double, cpu: Double, conns: Int)?
                    for _ in 0..<rounds {
                        let result = try await measure(client: clientName, proto: proto, der: der, url: target, count: count, inFlight: inFlight)
                        if best == nil || result.rate > best!.rate { best = result }
                    }
                    if let best {
                        print(
                            clientName.padding(toLength: 19, withPad: " ", startingAt: 0)
                                + proto.rawValue.padding(toLength: 10, withPad: " ", startingAt: 0)
                                + caseName.padding(toLength: 14, withPad: " ", startingAt: 0)
                                + String(format: "%9.0f  %11.1f  %5d", best.rate, best.cpu, best.conns))
                    }
                }
            }
        }
    }

    private func measure(client: String, proto: WireProtocol, der: [UInt8], url: URL, count: Int, inFlight: Int) async throws
        -> (rate: Double, cpu: Double, conns: Int)
    {
        let get: @Sendable () async throws -> Void
        let shutdown: () async throws -> Void
        let connections: () -> Int
        if client == "courier-engine" {
            var configuration = EngineConfiguration()
            configuration.tls.additionalTrustRootsDER = [der]
            configuration.httpVersion = proto == .h2 ? .automatic : .http1Only
            configuration.maximumConnectionsPerHost = inFlight
            configuration.maximumIdleConnectionsPerHost = inFlight
            let engine = try HTTPEngine(configuration: configuration)
            get = {
                let response = try await engine.collect(EngineRequest(url: url))
                guard response.head.status == .ok, response.body.readableBytes > 0 else { throw BenchError.status(Int(response.head.status.code), url) }
            }
            shutdown = { await engine.shutdown() }
            connections = { engine.openConnectionCount }
        } else {
            var tls = TLSConfiguration.makeClientConfiguration()
            tls.trustRoots = .file(ca)
            var configuration = HTTPClient.Configuration(tlsConfiguration: tls)
            configuration.httpVersion = proto == .h2 ? .automatic : .http1Only
            configuration.connectionPool = .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: inFlight)
            let http = HTTPClient(eventLoopGroup: MultiThreadedEventLoopGroup.singleton, configuration: configuration)
            let target = url.absoluteString
            get = {
                let response = try await http.execute(HTTPClientRequest(url: target), timeout: .seconds(60))
                guard response.status == .ok else { throw BenchError.status(Int(response.status.code), url) }
                let body = try await response.body.collect(upTo: 1 << 20)
                guard body.readableBytes > 0 else { throw BenchError.status(0, url) }
            }
            shutdown = { try await http.shutdown() }
            connections = { -1 }
        }
        // Warm-up: connections open, TLS done, code paths hot.
        try await Self.drive(get, count: inFlight * 4, inFlight: inFlight)
        let cpuBefore = Self.cpuSeconds()
        let start = DispatchTime.now().uptimeNanoseconds
        try await Self.drive(get, count: count, inFlight: inFlight)
        let elapsed = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        let cpu = Self.cpuSeconds() - cpuBefore
        let conns = connections()
        try await shutdown()
        return (Double(count) / elapsed, cpu / Double(count) * 1e6, conns)
    }

    /// Runs `count` calls with `inFlight` workers pulling from a shared counter.
    private static func drive(_ get: @escaping @Sendable () async throws -> Void, count: Int, inFlight: Int) async throws {
        let counter = Counter(count)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<inFlight {
                group.addTask {
                    while counter.take() { try await get() }
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

/// A countdown shared by the workers.
private final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var remaining: Int

    init(_ count: Int) { remaining = count }

    func take() -> Bool {
        lock.lock()
        defer { lock.unlock() }
        guard remaining > 0 else { return false }
        remaining -= 1
        return true
    }
}
