import ArgumentParser
import CourierEngine
import CourierTestServer
import Crypto
import Foundation
import NIOCore
import NIOHTTP1

/// `courier demo`: starts the embedded test server (HTTP and HTTPS) and walks through what
/// Courier does, step by step. Exits 0 only if every step did what it says.
struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Show Courier at work against its embedded test server (loopback only)."
    )

    @Option(help: "Size of the streamed upload, in MiB.")
    var uploadMiB: Int = 64

    func run() async throws {
        let output = DemoOutput()
        let server = try await TestServer.start()
        let tlsServer = try await TestServer.start(.init(tls: .valid))
        let wrongHostServer = try await TestServer.start(.init(tls: .wrongHost))
        let authority = tlsServer.certificateAuthority
        var configuration = EngineConfiguration()
        configuration.tls.trustsSystemRoots = false
        configuration.tls.additionalTrustRootsDER = [authority.rootCertificateDER]
        let engine = try HTTPEngine(configuration: configuration)
        output.title("Courier demo: embedded test server at \(server.baseURL.absoluteString) and \(tlsServer.baseURL.absoluteString)")

        var failures = 0
        func step(_ name: String, _ body: () async throws -> Void) async {
            output.step(name)
            do {
                try await body()
            } catch {
                failures += 1
                output.failure("\(error)")
            }
        }

        await step("GET with a query string, sent exactly as written") {
            let url = server.baseURL.appendingPathComponent("get").absoluteString + "?page=2&filter%5Bname%5D=caf%C3%A9&tags%5B%5D=a&tags%5B%5D=b"
            output.detail("GET \(url)")
            let response = try await engine.collect(EngineRequest(url: try Self.url(url)))
            let json = try Self.object(response.body)
            output.detail("\(response.head.status.code) \(response.head.status.reasonPhrase); server saw args = \(Self.compact(json["args"]))")
            try Self.check(response.head.status == .ok, "expected 200")
        }

        await step("POST a JSON body; the server echoes it") {
            var headers = HTTPHeaders()
            headers.add(name: "Content-Type", value: "application/json")
            let payload = #"{"user":"ada","roles":["admin","dev"],"active":true}"#
            let response = try await engine.collect(
                EngineRequest(method: "POST", url: try Self.url(server.baseURL.absoluteString + "/post"), headers: headers, body: .data(Data(payload.utf8)))
            )
            let json = try Self.object(response.body)
            output.detail("sent     \(payload)")
            output.detail("echoed   \(Self.compact(json["json"]))")
            try Self.check(json["data"] as? String == payload, "the echo differs from what was sent")
        }

        let uploadBytes = Int64(uploadMiB) << 20
        await step("Stream a generated \(uploadMiB) MiB upload; the server hashes what it received") {
            let chunk = ByteBuffer(repeating: UInt8(ascii: "C"), count: 1 << 20)
            var hasher = SHA256()
            for _ in 0..<uploadMiB { hasher.update(data: Data(chunk.readableBytesView)) }
            let expected = hasher.finalize().map { String(format: "%02x", $0) }.joined()
            let progress = ProgressLine(total: uploadBytes, output: output)
            let body = RequestBody.stream(length: uploadBytes) { writer in
                for _ in 0..<uploadMiB { try await writer.write(chunk) }
            }
            let response = try await Self.collect(
                engine,
                EngineRequest(method: "POST", url: try Self.url(server.baseURL.absoluteString + "/upload"), body: body),
                progress: progress
            )
            progress.finish()
            let json = try Self.object(response.body)
            output.detail("server counted \(json["bytes"] ?? "?") bytes, SHA-256 \(String(describing: json["sha256"] ?? "?").prefix(16))…")
            try Self.check((json["bytes"] as? NSNumber)?.int64Value == uploadBytes, "byte count mismatch")
            try Self.check(json["sha256"] as? String == expected, "hash mismatch")
        }

        await step("Download 64 MiB as a stream, read only as fast as it is consumed") {
            let size: Int64 = 64 << 20
            let response = try await engine.stream(EngineRequest(url: try Self.url(server.baseURL.absoluteString + "/download/\(size)")))
            let progress = ProgressLine(total: size, output: output)
            var total: Int64 = 0
            var intact = true
            for try await part in response.body {
                // Byte i of /download is "a" + i % 26: each chunk's first and last byte must sit
                // where the running offset says (a lost or repeated chunk would show).
                let view = part.readableBytesView
                if let first = view.first, let last = view.last {
                    let lastOffset = total + Int64(view.count - 1)
                    intact = intact && first == UInt8(ascii: "a") + UInt8(total % 26)
                        && last == UInt8(ascii: "a") + UInt8(lastOffset % 26)
                }
                total += Int64(part.readableBytes)
                progress.update(total)
            }
            progress.finish()
            output.detail("\(response.head.status.code), \(total) bytes, content \(intact ? "intact" : "CORRUPTED")")
            try Self.check(total == size && intact, "expected \(size) intact bytes")
        }

        await step("A server that breaks its promise: Content-Length larger than the body") {
            do {
                _ = try await engine.collect(EngineRequest(url: try Self.url(server.baseURL.absoluteString + "/fault/short-body?length=1000&sent=500")))
                throw DemoFailure("a truncated body was reported as a success")
            } catch let error as EngineError {
                output.detail("error, as a user sees it: \(error)")
                guard case .connectionLost = error else { throw DemoFailure("unexpected error \(error)") }
            }
        }

        await step("HTTPS with the embedded CA trusted: accepted") {
            let url = "https://localhost:\(tlsServer.port)/get"
            let response = try await engine.collect(EngineRequest(url: try Self.url(url)))
            output.detail("GET \(url) → \(response.head.status.code), \(response.metrics.tlsProtocolVersion ?? "?")")
            try Self.check(response.head.status == .ok, "expected 200")
        }

        await step("HTTPS with a certificate for another host: rejected") {
            let url = "https://localhost:\(wrongHostServer.port)/get"
            do {
                _ = try await engine.collect(EngineRequest(url: try Self.url(url)))
                throw DemoFailure("the wrong-host certificate was accepted")
            } catch let error as EngineError {
                output.detail("error: \(error)")
                guard case .serverTrustRejected = error else { throw DemoFailure("unexpected error \(error)") }
            }
        }

        await step("Metrics of one request, as a waterfall") {
            let fresh = try HTTPEngine(configuration: configuration)
            let response = try await fresh.collect(EngineRequest(url: try Self.url("https://localhost:\(tlsServer.port)/json")))
            await fresh.shutdown()
            for line in MetricsWaterfall.lines(for: response.metrics) { output.detail(line) }
        }

        await engine.shutdown()
        try await wrongHostServer.shutdown()
        try await tlsServer.shutdown()
        try await server.shutdown()
        if failures > 0 {
            output.title("\(failures) step(s) failed")
            throw ExitCode(1)
        }
        output.title("All steps did what they said.")
    }

    static func url(_ string: String) throws -> URL {
        guard let url = URL(string: string) else { throw DemoFailure("bad URL \(string)") }
        return url
    }

    static func object(_ body: ByteBuffer) throws -> [String: Any] {
        guard let object = try JSONSerialization.jsonObject(with: Data(body.readableBytesView)) as? [String: Any] else {
            throw DemoFailure("the body is not a JSON object")
        }
        return object
    }

    static func compact(_ value: Any?) -> String {
        guard let value, JSONSerialization.isValidJSONObject(value),
            let data = try? JSONSerialization.data(withJSONObject: value, options: [.sortedKeys])
        else { return String(describing: value ?? "nil") }
        return String(decoding: data, as: UTF8.self)
    }

    static func check(_ condition: Bool, _ message: String) throws {
        if !condition { throw DemoFailure(message) }
    }

    /// Runs a request through the event API, feeding upload progress to `progress`.
    static func collect(_ engine: HTTPEngine, _ request: EngineRequest, progress: ProgressLine) async throws -> CollectedResponse {
        try await withCheckedThrowingContinuation { continuation in
            let gathered = GatheredResponse()
            engine.execute(request) { event in
                switch event {
                case .uploadProgress(let sent, _): progress.update(sent)
                case .responseHead(let head): gathered.head = head
                case .bodyPart(var part): gathered.body.writeBuffer(&part)
                case .finished(let metrics):
                    if let head = gathered.head {
                        continuation.resume(returning: CollectedResponse(head: head, body: gathered.body, metrics: metrics))
                    } else {
                        continuation.resume(throwing: DemoFailure("no response head"))
                    }
                case .failed(let error, _): continuation.resume(throwing: error)
                }
            }
        }
    }
}

/// Holds a response being gathered; only touched from the request's event loop, in order.
private final class GatheredResponse: @unchecked Sendable {
    // Safe: the engine delivers one request's events serially on one event loop.
    var head: HTTPResponseHead?
    var body = ByteBuffer()
}

struct DemoFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
