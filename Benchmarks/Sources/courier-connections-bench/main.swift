// courier-connections-bench: what Courier's connection features buy, each against its
// alternative measured in the same run, rounds interleaved, medians reported.
//
//   Benchmarks/nginx/setup.sh restart      # nginx on 127.0.0.1:8089 and on DIR/nginx.sock
//   swift run -c release --package-path Benchmarks courier-connections-bench unix [REQUESTS] [ROUNDS] [IN_FLIGHT]
//   swift run -c release --package-path Benchmarks courier-connections-bench coalescing [ROUNDS] [nginx]
//   swift run -c release --package-path Benchmarks courier-connections-bench compression [MiB] [LEVEL]
//
// unix: small GETs (nginx's /json; one at a time, or IN_FLIGHT callers at once on as many
//   connections) through URLSessionManager and through HTTPEngine, over loopback TCP and over
//   nginx's Unix domain socket (http+unix://); requests/s of each and the ratios.
// coalescing: the test server (TLS, HTTP/2; or with `nginx`, nginx from setup-tls.sh) named by
//   8 host names (h1…h8.courier.test, all 127.0.0.1 by resolve entries, all on its
//   certificate); after one request to h1, 64 GETs in flight across the 8 names, first request
//   to last; with coalescing (one connection) and without (a connection per name); requests/s
//   of each, the ratio, connections opened.
// compression: a JSON-like file of MiB megabytes uploaded with RequestCompressor (gzip) to the
//   test server's /upload (which inflates and hashes it); MB/s of input and the process's
//   peak RSS (run it alone: the peak is the process's).
import BenchSupport
import Courier
import CourierEngine
import CourierTestServer
import Foundation
import HTTPTypes
import Synchronization
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

struct BenchFailure: Error, CustomStringConvertible {
    var description: String
}

let arguments = Array(CommandLine.arguments.dropFirst())
let mode = arguments.first ?? "unix"

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    guard !sorted.isEmpty else { return 0 }
    return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
}

func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
}

func get(_ manager: URLSessionManager, _ url: URL) async throws {
    let response = try await manager.response(for: HTTPRequest(method: .get, url: url))
    guard response.status == .ok else { throw BenchFailure(description: "\(url): status \(response.status.code)") }
}

// MARK: - unix

/// One client of the unix case: sends a GET and checks its status.
struct UnixCaseClient {
    let send: @Sendable (URL) async throws -> Void
    let close: @Sendable () async -> Void

    /// URLSessionManager's typed API, up to `connections` connections per host.
    static func session(connections: Int) -> UnixCaseClient {
        var configuration = SessionConfiguration()
        configuration.httpMaximumConnectionsPerHost = connections
        let manager = URLSessionManager(configuration: configuration)
        return UnixCaseClient(
            send: { try await get(manager, $0) },
            close: { manager.invalidateSessionCancelingTasks(true, resetSession: false) })
    }

    /// CourierEngine's `HTTPEngine.collect`, up to `connections` connections per host.
    static func engine(connections: Int) throws -> UnixCaseClient {
        var configuration = EngineConfiguration()
        configuration.maximumConnectionsPerHost = connections
        configuration.maximumIdleConnectionsPerHost = connections
        let engine = try HTTPEngine(configuration: configuration)
        return UnixCaseClient(
            send: { url in
                let response = try await engine.collect(EngineRequest(url: url))
                guard response.head.status == .ok else { throw BenchFailure(description: "\(url): status \(response.head.status.code)") }
            },
            close: { await engine.shutdown() })
    }
}

func unixCase() async throws {
    let requests = arguments.count > 1 ? Int(arguments[1]) ?? 5000 : 5000
    let rounds = arguments.count > 2 ? Int(arguments[2]) ?? 3 : 3
    let inFlight = max(1, arguments.count > 3 ? Int(arguments[3]) ?? 1 : 1)
    let directory = ProcessInfo.processInfo.environment["COURIER_BENCH_NGINX_DIR"] ?? "/tmp/courier-bench-nginx"
    let socket = directory + "/nginx.sock"
    guard FileManager.default.fileExists(atPath: socket) else {
        throw BenchFailure(description: "\(socket) is missing: run Benchmarks/nginx/setup.sh restart")
    }
    let encoded = socket.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? socket
    let transports: [(String, URL)] = [
        ("loopback TCP", URL(string: "http://127.0.0.1:8089/json")!),
        ("Unix socket", URL(string: "http+unix://\(encoded)/json")!),
    ]
    let layers = ["session", "engine"]
    var rates: [String: [Double]] = [:]
    for _ in 0..<rounds {
        for layer in layers {
            for (transport, url) in transports {
                let client = layer == "engine" ? try UnixCaseClient.engine(connections: inFlight) : UnixCaseClient.session(connections: inFlight)
                // The connections, opened before the clock starts.
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for _ in 0..<inFlight { group.addTask { try await client.send(url) } }
                    try await group.waitForAll()
                }
                let start = ContinuousClock.now
                // `inFlight` callers, each sending its share one after another.
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for caller in 0..<inFlight {
                        let share = requests / inFlight + (caller < requests % inFlight ? 1 : 0)
                        group.addTask { for _ in 0..<share { try await client.send(url) } }
                    }
                    try await group.waitForAll()
                }
                rates["\(layer) \(transport)", default: []].append(Double(requests) / seconds(ContinuousClock.now - start))
                await client.close()
            }
        }
    }
    let shape = inFlight == 1 ? "sequential" : "\(inFlight) in flight on up to \(inFlight) connections"
    print("unix: \(requests) GET /json (nginx) per round, \(shape), \(rounds) rounds, median req/s")
    for layer in layers {
        for (transport, _) in transports {
            let name = "\(layer) \(transport)"
            print(String(format: "  %-22@ %9.0f req/s", name as NSString, median(rates[name] ?? [])))
        }
        let ratio = median(rates["\(layer) Unix socket"] ?? []) / max(1, median(rates["\(layer) loopback TCP"] ?? []))
        print(String(format: "  %@: Unix socket / TCP %.2fx", layer as NSString, ratio))
    }
}

// MARK: - coalescing

/// Where the coalescing case's requests go: the in-process test server, or nginx with TLS and
/// HTTP/2 in its own process (`Benchmarks/nginx/setup-tls.sh start`), whose certificate also
/// names h1…h8.courier.test.
struct CoalescingServer {
    let port: Int
    let path: String
    let trustRootsDER: [[UInt8]]
    let connectionsAccepted: @Sendable () async throws -> Int
    let shutdown: @Sendable () async -> Void

    static func testServer() async throws -> CoalescingServer {
        let server = try await TestServer.start(.init(tls: .valid))
        return CoalescingServer(
            port: server.port, path: "/get",
            trustRootsDER: [try TestCertificateAuthority.shared.rootCertificateDER],
            connectionsAccepted: { server.connectionsAccepted },
            shutdown: { try? await server.shutdown() })
    }

    static func nginx() throws -> CoalescingServer {
        let directory = ProcessInfo.processInfo.environment["COURIER_BENCH_NGINX_TLS_DIR"] ?? "/tmp/courier-bench-nginx-tls"
        let port = Int(ProcessInfo.processInfo.environment["COURIER_BENCH_TLS_PORT"] ?? "") ?? 8443
        guard let pem = try? String(contentsOfFile: directory + "/tls/ca.pem", encoding: .utf8) else {
            throw BenchFailure(description: "\(directory)/tls/ca.pem is missing: run Benchmarks/nginx/setup-tls.sh start")
        }
        let roots = [try Certificate(pemEncoded: pem).derBytes]
        let probes = Atomic<Int>(0)
        return CoalescingServer(
            port: port, path: "/json", trustRootsDER: roots,
            connectionsAccepted: {
                // nginx's stub_status, read on a connection of its own: nginx's count less the
                // connections these reads opened (this one included).
                let opened = probes.add(1, ordering: .relaxed).newValue
                var configuration = SessionConfiguration()
                configuration.tls.additionalTrustRootsDER = roots
                let manager = URLSessionManager(configuration: configuration)
                defer { manager.invalidateSessionCancelingTasks(true, resetSession: false) }
                let (body, _) = try await manager.data(for: HTTPRequest(method: .get, url: URL(string: "https://127.0.0.1:\(port)/nginx_status")!))
                let text = String(decoding: body, as: UTF8.self)
                // "Active connections: N \nserver accepts handled requests\n A H R \n..."
                let lines = text.split(separator: "\n")
                guard lines.count > 2, let accepts = lines[2].split(separator: " ").first.flatMap({ Int($0) }) else {
                    throw BenchFailure(description: "unexpected nginx_status: \(text)")
                }
                return accepts - opened
            },
            shutdown: {})
    }
}

func coalescingCase() async throws {
    let rounds = arguments.count > 1 ? Int(arguments[1]) ?? 5 : 5
    let useNginx = arguments.count > 2 && arguments[2] == "nginx"
    let server = try await useNginx ? CoalescingServer.nginx() : CoalescingServer.testServer()
    let names = (1...8).map { "h\($0).courier.test" }
    var times: [Bool: [Double]] = [:]
    var connections: [Bool: [Int]] = [:]
    for _ in 0..<rounds {
        for coalesces in [true, false] {
            var configuration = SessionConfiguration()
            configuration.tls.additionalTrustRootsDER = server.trustRootsDER
            configuration.resolveOverrides = try names.map { try ResolveOverride(parsing: "\($0):\(server.port):127.0.0.1") }
            configuration.coalescesHTTP2Connections = coalesces
            let manager = URLSessionManager(configuration: configuration)
            let before = try await server.connectionsAccepted()
            try await get(manager, URL(string: "https://\(names[0]):\(server.port)\(server.path)")!)
            let start = ContinuousClock.now
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<64 {
                    let url = URL(string: "https://\(names[index % names.count]):\(server.port)\(server.path)")!
                    group.addTask { try await get(manager, url) }
                }
                try await group.waitForAll()
            }
            times[coalesces, default: []].append(seconds(ContinuousClock.now - start))
            connections[coalesces, default: []].append(try await server.connectionsAccepted() - before)
            manager.invalidateSessionCancelingTasks(true, resetSession: false)
        }
    }
    await server.shutdown()
    let serverName = useNginx ? "nginx, TLS 1.3, HTTP/2" : "test server, TLS, HTTP/2"
    print("coalescing: after one GET to h1, 64 GETs in flight across 8 names (\(serverName)), \(rounds) rounds, medians")
    for coalesces in [true, false] {
        let time = median(times[coalesces] ?? [])
        let opened = connections[coalesces]?.max() ?? 0
        print(String(format: "  %-22@ %8.2f ms  %8.0f req/s  connections: %d", (coalesces ? "coalescing" : "a connection per name") as NSString, time * 1000, 64 / time, opened))
    }
    print(String(format: "  coalescing / separate: %.2fx", median(times[false] ?? []) / max(1e-9, median(times[true] ?? []))))
}

// MARK: - compression

func compressionCase() async throws {
    let mebibytes = arguments.count > 1 ? Int(arguments[1]) ?? 256 : 256
    let level = arguments.count > 2 ? Int(arguments[2]) ?? 6 : 6
    let file = FileManager.default.temporaryDirectory.appendingPathComponent("courier-bench-\(UUID().uuidString).json")
    defer { try? FileManager.default.removeItem(at: file) }
    // JSON-like text: a record repeated with a counter, so it compresses as real JSON does.
    guard FileManager.default.createFile(atPath: file.path, contents: nil) else {
        throw BenchFailure(description: "cannot create \(file.path)")
    }
    let handle = try FileHandle(forWritingTo: file)
    var written = 0
    var index = 0
    while written < mebibytes << 20 {
        var chunk = ""
        for _ in 0..<1000 {
            chunk += #"{"id":\#(index),"name":"user \#(index)","active":\#(index % 3 == 0),"score":\#(Double(index % 977) / 7),"tags":["a","b","c"]},"#
            index += 1
        }
        let data = Data(chunk.utf8)
        try handle.write(contentsOf: data)
        written += data.count
    }
    try handle.close()
    let server = try await TestServer.start()
    defer { Task { try? await server.shutdown() } }
    let manager = URLSessionManager()
    manager.interceptor = RequestCompressor(level: level)
    manager.responseSerializer = HTTPResponseSerializer()
    var request = URLRequest(url: server.baseURL.appendingPathComponent("upload"))
    request.httpMethod = "POST"
    request.setValue("application/json", forHTTPHeaderField: "Content-Type")
    let start = ContinuousClock.now
    let answer: Data = try await withCheckedThrowingContinuation { continuation in
        manager.uploadTask(with: request, fromFile: file, completionHandler: { _, object, error in
            if let error { return continuation.resume(throwing: error) }
            continuation.resume(returning: object as? Data ?? Data())
        }).resume()
    }
    let elapsed = seconds(ContinuousClock.now - start)
    let report = (try? JSONSerialization.jsonObject(with: answer)) as? [String: Any]
    guard report?["content_encoding"] as? String == "gzip", (report?["bytes"] as? Int) == written else {
        throw BenchFailure(description: "the server did not get the gzip body whole: \(String(decoding: answer, as: UTF8.self).prefix(300))")
    }
    let onTheWire = report?["encoded_bytes"] as? Int ?? 0
    print("compression: \(written >> 20) MiB of JSON-like text uploaded with RequestCompressor (gzip, level \(level)) to /upload")
    print(String(format: "  %.0f MB/s of input (%.2f s), %.1f MB on the wire; peak RSS %lld MiB (test server in the same process)",
        Double(written) / elapsed / 1e6, elapsed, Double(onTheWire) / 1e6, ResourceUsage.peakRSSKiB() >> 10))
}

do {
    switch mode {
    case "unix": try await unixCase()
    case "coalescing": try await coalescingCase()
    case "compression": try await compressionCase()
    default: throw BenchFailure(description: "unknown case \(mode): unix, coalescing or compression")
    }
} catch {
    FileHandle.standardError.write(Data("courier-connections-bench: \(error)\n".utf8))
    exit(1)
}
