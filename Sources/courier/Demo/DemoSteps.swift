import Courier
import CourierTestServer
import Crypto
import Foundation
import Synchronization
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The demo's steps, each on Courier's public session API (`HTTPSessionManager`,
/// `URLSessionManager`, the serializers, `MultipartFormData`). Each step prints what it sends
/// and what came back, and throws a ``DemoFailure`` when the result is not what it says.
struct DemoSteps: Sendable {
    let servers: DemoServers
    let output: DemoOutput
    let workDirectory: URL

    typealias Step = (name: String, run: @Sendable () async throws -> Void)

    /// The steps in order.
    func all(uploadMiB: Int, downloadMiB: Int) -> [Step] {
        [
            ("GET with nested query parameters (HTTPRequestSerializer)", getWithNestedQuery),
            ("POST a JSON body (JSONRequestSerializer); the server echoes it", postJSON),
            ("Multipart upload of a generated \(uploadMiB) MiB file, streamed from disk", { try await uploadMultipart(mebibytes: uploadMiB) }),
            ("Download task of \(downloadMiB) MiB, streamed to a file and moved into place", { try await download(mebibytes: downloadMiB) }),
            ("Responses that fail validation (JSONResponseSerializer)", failValidation),
            (DemoTLS.stepTitle, { try await DemoTLS(servers: servers, output: output).run() }),
            ("Timing waterfall of one HTTPS request on a new connection", waterfall),
            (DemoImages.stepTitle, { try await DemoImages(servers: servers, output: output).run() }),
        ]
    }

    // MARK: - 1. GET

    private func getWithNestedQuery() async throws {
        let manager = HTTPSessionManager(baseURL: servers.http.baseURL)
        let parameters: Parameters = ["user": ["name": "Ada", "tags": ["x", "y"]], "page": 1]
        output.detail("parameters  [\"user\": [\"name\": \"Ada\", \"tags\": [\"x\", \"y\"]], \"page\": 1]")
        let request = try manager.makeRequest(method: "GET", urlString: "get", parameters: parameters, headers: nil)
        let url = request.url?.absoluteString ?? "?"
        output.detail("GET \(url)")
        output.detail("    (decoded: \(url.removingPercentEncoding ?? url))")
        let (object, response) = try await manager.data(for: request)
        let args = (object as? JSONValue)?["args"]
        let expected: JSONValue = ["page": "1", "user[name]": "Ada", "user[tags][]": ["x", "y"]]
        try Self.check(response.statusCode == 200, "expected 200, got \(response.statusCode)")
        try Self.check(args == expected, "the server saw args \(Self.compact(args)), expected \(Self.compact(expected))")
        output.ok("\(response.statusCode); the server saw args \(Self.compact(args))")
    }

    // MARK: - 2. JSON POST

    private func postJSON() async throws {
        let manager = HTTPSessionManager(baseURL: servers.http.baseURL)
        manager.requestSerializer = JSONRequestSerializer()
        let parameters: Parameters = [
            "name": "Ada Lovelace", "born": 1815, "languages": ["Analytical Engine", "Swift"],
            "address": ["city": "London"], "admin": true,
        ]
        let (object, response) = try await manager.post("post", parameters: parameters)
        let echo = object as? JSONValue
        let expected: JSONValue = [
            "name": "Ada Lovelace", "born": 1815, "languages": ["Analytical Engine", "Swift"],
            "address": ["city": "London"], "admin": true,
        ]
        output.detail("POST \(servers.http.baseURL.absoluteString)/post  Content-Type: \(echo?["headers"]?["Content-Type"]?.stringValue ?? "?")")
        output.detail("body   \(echo?["data"]?.stringValue ?? "?")")
        try Self.check(response.statusCode == 200, "expected 200, got \(response.statusCode)")
        try Self.check(echo?["json"] == expected, "the server parsed \(Self.compact(echo?["json"])), expected \(Self.compact(expected))")
        output.ok("echoed back as JSON, equal to what was sent: \(Self.compact(echo?["json"]))")
    }

    // MARK: - 3. Multipart upload

    private func uploadMultipart(mebibytes: Int) async throws {
        let file = workDirectory.appendingPathComponent("random-\(mebibytes)MiB.bin")
        let fileDigest = try DemoFiles.writeRandomFile(at: file, mebibytes: mebibytes)
        defer { try? FileManager.default.removeItem(at: file) }
        output.detail("generated \(file.lastPathComponent) (\(mebibytes) MiB of random bytes), SHA-256 \(fileDigest.prefix(16))…")

        // The server's /upload hashes the whole body it receives; the local side hashes the
        // same multipart body (boundaries, part headers, the file) as the form produces it.
        let manager = HTTPSessionManager(baseURL: servers.http.baseURL)
        let capture = UploadCapture()
        let object: (any Sendable)? = try await withCheckedThrowingContinuation { continuation in
            manager.post(
                "upload", parameters: ["description": "a generated file"], headers: nil,
                constructingBody: { body in
                    try body.appendPart(fileURL: file, name: "file", fileName: file.lastPathComponent, mimeType: "application/octet-stream")
                    self.output.detail(
                        "POST \(self.servers.http.baseURL.absoluteString)/upload  multipart/form-data, 2 parts, \(Self.grouped(body.contentLength)) bytes")
                    capture.set(form: body, progress: ProgressLine(total: body.contentLength, output: self.output))
                },
                progress: { capture.progress?.update($0.completedUnitCount) },
                success: { _, object in continuation.resume(returning: object) },
                failure: { _, error in continuation.resume(throwing: error) })
        }
        capture.progress?.finish()
        guard let body = capture.form else { throw DemoFailure("the multipart form was never built") }
        let sent = body.contentLength
        var hasher = SHA256()
        try await body.writeBody { chunk in hasher.update(data: chunk) }
        let localDigest = DemoFiles.hex(hasher.finalize())
        let reply = object as? JSONValue
        let bytes = reply?["bytes"]?.intValue
        let serverDigest = reply?["sha256"]?.stringValue ?? "?"
        try Self.check(bytes == sent, "the server counted \(bytes.map(String.init) ?? "?") bytes, \(sent) were sent")
        try Self.check(serverDigest == localDigest, "server SHA-256 \(serverDigest) differs from the local \(localDigest)")
        output.ok("the server received \(Self.grouped(sent)) bytes with SHA-256 \(serverDigest.prefix(16))…, equal to the body sent")
    }

    // MARK: - 4. Download

    private func download(mebibytes: Int) async throws {
        let size = Int64(mebibytes) << 20
        let manager = URLSessionManager()
        manager.responseSerializer = HTTPResponseSerializer()
        let destination = workDirectory.appendingPathComponent("download-\(mebibytes)MiB.txt")
        defer { try? FileManager.default.removeItem(at: destination) }
        let url = servers.http.baseURL.appendingPathComponent("download/\(size)")
        output.detail("GET \(url.absoluteString) → \(destination.lastPathComponent)")
        let progress = ProgressLine(total: size, output: output)
        let location: URL = try await withCheckedThrowingContinuation { continuation in
            let task = manager.downloadTask(
                with: URLRequest(url: url),
                progress: { progress.update($0.completedUnitCount) },
                destination: { _, _ in destination },
                completionHandler: { _, fileURL, error in
                    if let error {
                        continuation.resume(throwing: error)
                    } else if let fileURL {
                        continuation.resume(returning: fileURL)
                    } else {
                        continuation.resume(throwing: DemoFailure("the download finished without a file"))
                    }
                })
            task.resume()
        }
        progress.finish()
        try Self.check(location.standardizedFileURL == destination.standardizedFileURL, "the file ended at \(location.path), not at the destination")
        let written = try DemoFiles.size(of: location)
        try Self.check(written == size, "the file has \(written) bytes, expected \(size)")
        try DemoFiles.verifyAlphabetPattern(at: location, size: size)
        output.ok("\(Self.grouped(written)) bytes at the destination, every byte the server's a…z pattern")
    }

    // MARK: - 5. Validation failures

    private func failValidation() async throws {
        let manager = HTTPSessionManager(baseURL: servers.http.baseURL)
        for (path, expectation) in [("status/418", "an unacceptable status code"), ("html", "an unacceptable content type")] {
            output.detail("GET \(servers.http.baseURL.absoluteString)/\(path)")
            do {
                _ = try await manager.get(path)
                throw DemoFailure("/\(path) was accepted; expected \(expectation)")
            } catch let error as CourierError {
                switch (path, error) {
                case ("status/418", .unacceptableStatusCode(let response, _, _)) where response.statusCode == 418: break
                case ("html", .unacceptableContentType(let type, _, _)) where type == "text/html": break
                default: throw DemoFailure("/\(path) failed, but not with \(expectation): \(error)")
                }
                output.ok("rejected, as a user sees it: \(Self.userFacing(error))")
            }
        }
    }

    // MARK: - 7. Waterfall

    private func waterfall() async throws {
        // A new manager has no pooled connection, so DNS, connect and TLS all show.
        let manager = HTTPSessionManager(baseURL: URL(string: "https://localhost:\(servers.https.port)"), configuration: DemoTLS.trustingTestCA(servers.https.certificateAuthority))
        let task: DataTask = try await withCheckedThrowingContinuation { continuation in
            manager.get(
                "json", success: { task, _ in continuation.resume(returning: task) },
                failure: { _, error in continuation.resume(throwing: error) })
        }
        manager.invalidateSessionCancelingTasks(false, resetSession: false)
        guard let metrics = task.metrics else { throw DemoFailure("the task has no metrics") }
        output.detail("GET https://localhost:\(servers.https.port)/json")
        for line in MetricsWaterfall.lines(for: metrics) { output.detail(line) }
        try Self.check(
            metrics.domainLookupEnd != nil && metrics.connectEnd != nil && metrics.secureConnectionEnd != nil
                && metrics.responseEnd != nil,
            "the metrics lack a phase of a new HTTPS connection")
        output.ok("DNS, connect, TLS, request, wait and download timed (task.metrics)")
    }

    // MARK: - Helpers

    static func check(_ condition: Bool, _ message: @autoclosure () -> String) throws {
        if !condition { throw DemoFailure(message()) }
    }

    /// An error as a user should read it: its description, not a dump.
    static func userFacing(_ error: any Error) -> String {
        if let error = error as? CourierError { return error.description }
        if let error = error as? DemoFailure { return error.description }
        return (error as? any LocalizedError)?.errorDescription ?? String(describing: error)
    }

    /// Compact JSON with sorted keys, slashes unescaped.
    static func compact(_ value: JSONValue?) -> String {
        guard let value else { return "nothing" }
        return String(decoding: value.jsonData, as: UTF8.self).replacingOccurrences(of: "\\/", with: "/")
    }

    /// `67,109,123`.
    static func grouped(_ value: Int64) -> String {
        let digits = Array(String(value))
        var text = ""
        for (index, digit) in digits.enumerated() {
            if index > 0, (digits.count - index) % 3 == 0 { text.append(",") }
            text.append(digit)
        }
        return text
    }
}

/// What the multipart step keeps from the form-building closure: the form (to hash the body
/// it produces) and the progress bar sized to it.
private final class UploadCapture: Sendable {
    private let state = Mutex<(form: MultipartFormData?, progress: ProgressLine?)>((nil, nil))

    var form: MultipartFormData? { state.withLock { $0.form } }
    var progress: ProgressLine? { state.withLock { $0.progress } }

    func set(form: MultipartFormData, progress: ProgressLine) {
        state.withLock { $0 = (form, progress) }
    }
}
