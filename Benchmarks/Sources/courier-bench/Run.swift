import ArgumentParser
import BenchSupport
import CourierTestServer
import Foundation

/// `courier-bench run` (the default): every selected client on every selected case, round by
/// round, each measurement in a child process.
struct Run: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Measure CourierEngine against AsyncHTTPClient and URLSession, interleaved."
    )

    @Option(help: "Comma-separated cases, or all: sequential-small, concurrent-small, download-256m, upload-256m.")
    var cases = "all"
    @Option(help: "Comma-separated clients, or all: courier-engine, courier-session, courier-session-http-types, courier-session-typed, courier-session-monitor and courier-session-events (small cases), async-http-client, urlsession, and the reference rows curl and wrk.")
    var clients = "all"
    @Option(help: "Requests per run for the small cases (default 5,000 sequential, 20,000 concurrent).")
    var requests: Int?
    @Option(help: "Requests in flight for concurrent-small.")
    var concurrency = 64
    @Option(help: "Connections per host every client may open.")
    var connections = 64
    @Option(help: "Upload size (and test-server download size) in MiB; smaller for smoke runs.")
    var mib = 256
    @Option(help: "test: the in-process CourierTestServer; nginx: nginx at --url (uploads still go to the test server).")
    var server = "test"
    @Option(help: "nginx's base URL (Benchmarks/nginx/setup.sh start).")
    var url = "http://127.0.0.1:8089"
    @Option(help: "A URL for the download case, overriding the server's.")
    var downloadURL: String?
    @Option(help: "nginx's document root, to compare downloaded files with the original.")
    var nginxRoot = (ProcessInfo.processInfo.environment["COURIER_BENCH_NGINX_DIR"] ?? "/tmp/courier-bench-nginx") + "/www"
    @Option(help: "Write the results as JSON to this file.")
    var json: String?
    @OptionGroup var roundOptions: RoundOptions
    @Option(help: "A child that runs longer than this many seconds is reported as hung.")
    var timeout: Double = 600
    @Option(help: "Where downloads and the URLSession upload file go.")
    var scratch = "/tmp/courier-bench"
    @Option(help: "Seconds each wrk run lasts (wrk runs for a time, not a request count).")
    var wrkDuration: Double = 5

    func run() async throws {
        let caseList = try parseList(cases, as: BenchCase.self)
        let clientList = try parseList(clients, as: ClientKind.self)
        guard server == "test" || server == "nginx" else { throw ValidationError("--server is test or nginx") }
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)

        guard let nginxBase = URL(string: url) else { throw ValidationError("--url \(url) is not a URL") }
        let testServer = try await TestServer.start()
        let plan = try Plan.make(self, testServer: testServer, nginxBase: nginxBase, cases: caseList)
        let runner = Runner(options: self, plan: plan, clients: clientList)

        log("courier-bench: server \(server); test server \(testServer.baseURL.absoluteString) (in this process)")
        log("clients: \(clientList.map(\.rawValue).joined(separator: ", ")); rounds: \(roundOptions.rounds); connections per host: \(connections); cores: \(Int(MachineCPU.cores)) (nothing pinned)")
        for note in plan.notes { log("note: \(note)") }

        var summaries: [CaseSummary] = []
        for benchCase in caseList {
            guard let target = plan.targets[benchCase] else { continue }
            summaries.append(await runner.measure(benchCase, target))
        }
        try? await testServer.shutdown()

        let report = Report(summaries: summaries, notes: plan.notes)
        print(report.table())
        if let json {
            try report.json().write(to: URL(fileURLWithPath: json))
            log("wrote \(json)")
        }
        if report.hasProblems { throw ExitCode(1) }
    }
}

/// Where each case goes and how its work is checked.
struct Target: Sendable {
    var url: URL
    var counter: ConnectionCounter
    /// What the server is, for the table.
    var serverName: String
    /// Bytes each request's body must have (small cases), or the download / upload size.
    var expectedBytes: Int64
    /// For downloads: a local file with the same bytes, compared after each download.
    var origin: String?
}

/// Counts the TCP connections a server accepted.
enum ConnectionCounter: Sendable {
    case testServer(TestServer)
    case nginx(URL)

    func read() -> Int? {
        switch self {
        case .testServer(let server): return server.connectionsAccepted
        case .nginx(let base): return PlainHTTP.nginxAccepts(base: base)
        }
    }

    /// Connections the counting itself opened between two reads.
    var overhead: Int {
        switch self {
        case .testServer: return 0
        case .nginx: return 1
        }
    }
}

struct Plan {
    var targets: [BenchCase: Target] = [:]
    var notes: [String] = []
    var uploadFile: String?

    static func make(_ options: Run, testServer: TestServer, nginxBase: URL, cases: [BenchCase]) throws -> Plan {
        var plan = Plan()
        let bytes = Int64(options.mib) << 20
        let useNginx = options.server == "nginx"
        func nginxUp() -> Bool { PlainHTTP.get(nginxBase.appendingPathComponent("json"))?.status == 200 }
        if useNginx, !nginxUp() {
            throw ValidationError("nginx does not answer at \(nginxBase.absoluteString)/json; run Benchmarks/nginx/setup.sh start")
        }

        for benchCase in cases {
            switch benchCase {
            case .sequentialSmall, .concurrentSmall:
                let base = useNginx ? nginxBase : testServer.baseURL
                let url = base.appendingPathComponent("json")
                guard let probe = PlainHTTP.get(url), probe.status == 200 else {
                    throw ValidationError("GET \(url.absoluteString) failed")
                }
                plan.targets[benchCase] = Target(
                    url: url,
                    counter: useNginx ? .nginx(nginxBase) : .testServer(testServer),
                    serverName: useNginx ? "nginx" : "test server",
                    expectedBytes: Int64(probe.body.count)
                )
            case .download256m:
                if let custom = options.downloadURL, let url = URL(string: custom) {
                    guard let head = PlainHTTP.get(url, method: "HEAD"), head.status == 200,
                        let length = head.headers["content-length"].flatMap({ Int64($0) })
                    else { throw ValidationError("HEAD \(custom) gave no 200 with a Content-Length") }
                    plan.targets[benchCase] = Target(url: url, counter: .nginx(nginxBase), serverName: "custom", expectedBytes: length)
                    continue
                }
                if !useNginx {
                    let probeURL = testServer.baseURL.appendingPathComponent("download/16")
                    if let probe = PlainHTTP.get(probeURL), probe.status == 200, probe.body.count == 16 {
                        plan.targets[benchCase] = Target(
                            url: testServer.baseURL.appendingPathComponent("download/\(bytes)"),
                            counter: .testServer(testServer),
                            serverName: "test server",
                            expectedBytes: bytes
                        )
                        continue
                    }
                    plan.notes.append("the test server has no /download/{n} endpoint: download-256m goes to nginx at \(nginxBase.absoluteString)")
                }
                let url = nginxBase.appendingPathComponent("download-256m")
                guard let head = PlainHTTP.get(url, method: "HEAD"), head.status == 200,
                    let length = head.headers["content-length"].flatMap({ Int64($0) })
                else {
                    plan.notes.append("download-256m skipped: nginx does not serve \(url.absoluteString) (Benchmarks/nginx/setup.sh start)")
                    continue
                }
                let originPath = options.nginxRoot + "/download-256m"
                let originSize = (try? FileManager.default.attributesOfItem(atPath: originPath)[.size] as? NSNumber)?.int64Value
                plan.targets[benchCase] = Target(
                    url: url,
                    counter: .nginx(nginxBase),
                    serverName: "nginx",
                    expectedBytes: length,
                    origin: originSize == length ? originPath : nil
                )
                if originSize != length {
                    plan.notes.append("downloads are checked by size only (no \(originPath) of \(length) bytes to compare with)")
                }
            case .upload256m:
                if useNginx {
                    plan.notes.append("upload-256m goes to the test server's /upload (nginx answers before reading the body)")
                }
                plan.targets[benchCase] = Target(
                    url: testServer.baseURL.appendingPathComponent("upload"),
                    counter: .testServer(testServer),
                    serverName: "test server",
                    expectedBytes: bytes
                )
                plan.uploadFile = try makeUploadFile(directory: options.scratch, bytes: bytes)
            }
        }
        return plan
    }

    /// The file URLSession uploads from: the same bytes the other clients generate.
    static func makeUploadFile(directory: String, bytes: Int64) throws -> String {
        let path = "\(directory)/upload-\(bytes).bin"
        if let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.int64Value,
            size == bytes
        {
            return path
        }
        var sink = try FileSink(path: path + ".tmp")
        let chunk = RepeatedChunks.patternChunk(size: 64 << 10)
        var remaining = bytes
        while remaining > 0 {
            let size = Int(min(Int64(chunk.readableBytes), remaining))
            guard let slice = chunk.getSlice(at: chunk.readerIndex, length: size) else {
                throw BenchError.io("cannot slice \(size) bytes of the upload pattern")
            }
            try sink.write(slice)
            remaining -= Int64(size)
        }
        try sink.close()
        try? FileManager.default.removeItem(atPath: path)
        try FileManager.default.moveItem(atPath: path + ".tmp", toPath: path)
        return path
    }
}
