import ArgumentParser
import Courier
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `courier bench URL -n N -c C`: a load generator on Courier's session layer, printing
/// requests/s, transfer rate, status codes, errors by kind and latency percentiles.
struct BenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Load-test a URL with Courier's session layer; print requests/s and latency percentiles.",
        discussion: """
            Sends N requests in total (or for --duration seconds), C at a time, each through a \
            URLSessionManager data task, and reports requests/s, bytes/s, status codes, errors \
            by kind and latency p50/p90/p99/p99.9/max (HdrHistogram, monotonic clock). Every \
            status counts as a response; connection failures, timeouts and TLS rejections count \
            as errors, and any error makes the exit status 1.
            """
    )

    @Argument(help: "The URL to request (http or https).")
    var url: String

    @Option(name: .customShort("n"), help: ArgumentHelp("Number of requests to send in total (default 200 without --duration).", valueName: "requests"))
    var requests: Int?

    @Option(name: .customShort("c"), help: ArgumentHelp("Number of requests in flight at once (1 to 10000).", valueName: "concurrency"))
    var concurrency: Int = 10

    @Option(name: .customShort("m"), help: ArgumentHelp("HTTP method.", valueName: "method"))
    var method: String = "GET"

    @Option(name: .customShort("H"), help: ArgumentHelp("A request header (repeatable).", valueName: "Name: value"))
    var headers: [String] = []

    @Option(name: [.customShort("d"), .customLong("data")], help: ArgumentHelp("A request body, sent as is.", valueName: "body"))
    var body: String?

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp("Run for this many seconds instead of a number of requests (at most 10⁹).", valueName: "seconds"))
    var duration: Double?

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp("Per-request idle and connect timeout, in seconds (at most 10⁹).", valueName: "seconds"))
    var timeout: Double = 30

    @Option(help: ArgumentHelp(
        "Trust the CA certificates in this PEM file (besides the system roots), e.g. the root-ca.pem `courier serve --tls` writes.",
        valueName: "path"))
    var cacert: String?

    @Flag(help: "Print the report as JSON.")
    var json = false

    /// The most requests `-c` may keep in flight: 10,000.
    static let maximumConcurrency = 10_000

    func validate() throws {
        if let requests, requests < 1 {
            throw ValidationError("-n must be at least 1 (got \(requests)).")
        }
        guard concurrency >= 1 else {
            throw ValidationError("-c must be at least 1 (got \(concurrency)).")
        }
        // One task (and up to one connection) per request in flight.
        guard concurrency <= Self.maximumConcurrency else {
            throw ValidationError("-c must be at most \(Self.maximumConcurrency) (got \(concurrency)).")
        }
        do {
            // nan, zero and negative are refused; huge values (inf too) are clamped in run().
            if let duration { _ = try SecondsOption.checked(duration, option: "--duration") }
            _ = try SecondsOption.checked(timeout, option: "--timeout")
        } catch {
            throw ValidationError(error.description)
        }
        if duration != nil, requests != nil {
            throw ValidationError("Give either -n or --duration, not both.")
        }
        guard !method.isEmpty, method.allSatisfy({ $0.isLetter || $0 == "-" }) else {
            throw ValidationError("'\(method)' is not an HTTP method.")
        }
        _ = try Self.parseURL(url)
        for header in headers { _ = try Self.parseHeader(header) }
        if let cacert { _ = try Self.loadTrustRoots(cacert) }
    }

    func run() async throws {
        var request = URLRequest(url: try Self.parseURL(url))
        request.httpMethod = method.uppercased()
        for header in headers {
            let (name, value) = try Self.parseHeader(header)
            request.addValue(value, forHTTPHeaderField: name)
        }
        if let body { request.httpBody = Data(body.utf8) }
        let shownURL = MessageSanitizer.withoutPasswords(url)  // never print the password
        let seconds = try duration.map { try SecondsOption.checked($0, option: "--duration") }
        let limit: BenchRunner.Limit = seconds.map { .duration(SecondsOption.duration($0)) } ?? .requests(requests ?? 200)
        if !json {
            let budget = seconds.map { String(format: "for %.1f s", $0) } ?? "\(requests ?? 200) requests"
            print("courier bench \(request.httpMethod ?? "GET") \(shownURL): \(budget), \(concurrency) in flight")
            fflush(nil)
        }
        let trustRoots = try cacert.map(Self.loadTrustRoots) ?? []
        let runner = BenchRunner(
            request: request, limit: limit, concurrency: concurrency,
            timeout: try SecondsOption.checked(timeout, option: "--timeout"), additionalTrustRootsDER: trustRoots)
        let (tally, elapsed) = await runner.run()
        let report = BenchReport(url: shownURL, method: request.httpMethod ?? "GET", concurrency: concurrency, tally: tally, elapsed: elapsed)
        print(json ? try report.json() : report.text, terminator: "")
        fflush(nil)
        if report.errors > 0 {
            StandardStreams.writeError(Data("courier bench: \(report.errors) of \(report.requests) requests failed\n".utf8))
            throw ExitCode(1)
        }
    }

    /// The DER bytes of every certificate in the PEM file at `path`.
    static func loadTrustRoots(_ path: String) throws -> [[UInt8]] {
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw ValidationError("Cannot read the CA file '\(path)': \(error.localizedDescription)")
        }
        do {
            return try Certificate.certificates(pemEncoded: text).map(\.derBytes)
        } catch {
            throw ValidationError("The CA file '\(path)' holds no usable certificate: \(error)")
        }
    }

    /// An absolute http or https URL with a host.
    static func parseURL(_ string: String) throws -> URL {
        guard let url = URL(string: string), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
            let host = url.host, !host.isEmpty
        else {
            throw ValidationError("'\(string)' is not an http or https URL (for example http://127.0.0.1:8080/get).")
        }
        return url
    }

    /// `Name: value` → (name, value). The name must be a non-empty token.
    static func parseHeader(_ header: String) throws -> (String, String) {
        guard let colon = header.firstIndex(of: ":") else {
            throw ValidationError("Header '\(header)' has no ':'; write it as 'Name: value'.")
        }
        let name = String(header[..<colon])
        let value = header[header.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        let separators = Set("()<>@,;:\\\"/[]?={} \t")
        guard !name.isEmpty, name.unicodeScalars.allSatisfy({ $0.isASCII && $0.value > 32 && $0.value < 127 }),
            !name.contains(where: separators.contains)
        else {
            throw ValidationError("Header name '\(name)' is not a valid HTTP header name.")
        }
        return (name, value)
    }
}
