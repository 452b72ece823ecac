import ArgumentParser
import Courier
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `courier [METHOD] URL [ITEM ...]`: an HTTPie-style client on Courier's public API. The
/// default subcommand, so `courier GET :8080/get a==1` needs no subcommand name.
struct RequestCommand: AsyncParsableCommand {
    static let usage = """
        courier [METHOD] URL [ITEM ...]

        ITEM: name==value (query), name=value (JSON string or form field), name:=json (raw JSON), \
        name=@file / name:=@file (field from a file), Header:value (header; 'Header:' removes it), \
        Header; (empty header), field@path (file part: multipart), @path (the body from a file). \
        METHOD defaults to GET, or POST when data items are present. URL shorthands: \
        :8080/get = http://localhost:8080/get; no scheme = http://.
        """

    /// The root command's help text: how to send a request, and the exit statuses.
    static let rootDiscussion = """
        Send a request (the default subcommand): \(usage)

        \(ExitStatus.documentation)
        See 'courier request --help' for every option.
        """

    static let configuration = CommandConfiguration(
        commandName: "request",
        abstract: "Send an HTTP request, HTTPie style (the default subcommand).",
        usage: usage,
        discussion: ExitStatus.documentation
    )

    @Argument(help: ArgumentHelp("[METHOD] URL [ITEM ...]", valueName: "request"))
    var arguments: [String] = []

    @OptionGroup(title: "Content types") var content: ContentOptions
    @OptionGroup(title: "Output") var outputOptions: OutputOptions
    @OptionGroup(title: "Authentication") var authentication: AuthenticationOptions
    @OptionGroup(title: "Network") var network: NetworkOptions
    @OptionGroup(title: "SSL") var ssl: SSLOptions
    @OptionGroup(title: "Downloads") var downloads: DownloadOptions
    @OptionGroup(title: "Sessions") var sessions: SessionOptions

    func run() async throws {
        let stdoutIsTerminal = isatty(STDOUT_FILENO) == 1
        var url: URL?
        do {
            let parsed = try RequestArguments.parse(arguments, defaultScheme: try network.scheme())
            url = URL(string: parsed.url)
            let printOptions = try outputOptions.printOptions(isTerminal: stdoutIsTerminal)
            let writeOut = try outputOptions.writeOutFormat()
            var session = try openSession(url: url)
            let (login, prompted) = try credentials(host: url?.host, stored: session?.contents.auth)
            let effectiveAuthType =
                authentication.auth == nil ? session?.contents.auth?.type ?? authentication.authType : authentication.authType
            var builder = try makeBuilder(parsed, basicAuth: effectiveAuthType == "basic" ? login : nil)
            let stdinFile = content.raw == nil ? StandardInputBody.regularFileAtStart(ignored: content.ignoreStdin) : nil
            // A pipe with --chunked or a Content-Length item: stdin is sent as it is read (bounded
            // memory, HTTPie's rule), unless -x needs it whole.
            let declaredLength = Self.declaredContentLength(parsed.items)
            let streamsPipe =
                (content.chunked || declaredLength != nil) && content.compress == 0 && content.raw == nil && !content.ignoreStdin
                && StandardInputBody.currentKind() == .pipe
            builder.rawBody = stdinFile == nil && !streamsPipe ? try rawBody() : (Data(), "stdin")
            builder.defaultHeaders = session?.contents.headers.map { ($0.name, $0.value) } ?? []
            var prepared = try builder.build()
            if let stdinFile {
                // `< file`: streamed from the file like @file, never read whole.
                prepared.urlRequest.httpBody = nil
                prepared.bodyFile = stdinFile
            }
            if streamsPipe {
                prepared.urlRequest.httpBody = nil
                prepared.streamsStandardInput = true
                prepared.standardInputLength = content.chunked ? nil : declaredLength
            }
            try compressBody(&prepared)
            url = prepared.urlRequest.url
            let jar = HTTPCookieJar()
            session?.contents.restoreCookies(into: jar)
            if outputOptions.curl {
                // The curl command for the request as it would go out (with the session's cookies).
                var command = try await CurlCommandOutput.command(for: Self.withCookies(prepared, from: jar))
                if let proxy = network.proxy {
                    // curl takes the same proxy URLs (http, socks5, socks5h); checked as for sending.
                    _ = try Self.parseProxy(proxy)
                    command += " --proxy " + CurlCommandOutput.quote(proxy)
                }
                _ = try network.connectionTargets()  // checked as for sending
                for (flag, value) in network.curlConnectionArguments { command += " \(flag) " + CurlCommandOutput.quote(value) }
                print(command)
                return
            }
            if outputOptions.offline {
                // The request as it would go out: with the session's cookies, which the session
                // would add when sending. The session learns this run's headers and credentials.
                let shown = Self.withCookies(prepared, from: jar)
                try await printRequest(shown, printer: ExchangePrinter(options: try outputOptions.offlinePrintOptions(isTerminal: stdoutIsTerminal)))
                try saveSession(&session, parsed: parsed, credentials: login, prompted: prompted, authType: effectiveAuthType, jar: jar)
                return
            }
            let hsts = try openHSTS()
            let manager = try makeManager(digestAuth: effectiveAuthType == "digest" ? login : nil, cookieJar: jar, hsts: hsts)
            let har = try HAROutput.attach(outputOptions, to: manager)
            defer { har?.write() }
            if outputOptions.verbose, let hsts, let asked = prepared.urlRequest.url, let upgraded = hsts.upgradedURL(for: asked) {
                let line = "* HSTS: \(asked.absoluteString) upgraded to \(upgraded.absoluteString)\n"
                StandardStreams.writeOutput(Data(MessageSanitizer.withoutPasswords(line).utf8))
            }
            if outputOptions.reconnect { try ReconnectingEventStream.check(prepared, download: downloads.download) }
            if downloads.download {
                var request = prepared.urlRequest
                if let file = prepared.bodyFile {
                    // A download task takes its body from the request: read the file (only here).
                    request.httpBody = try RequestBuilder.contents(ofFile: file.url.path)
                }
                let status = try await DownloadFlow(
                    manager: manager, request: request, output: downloads.output, resume: downloads.resume,
                    printHeaders: outputOptions.printsDownloadHead
                ).run()
                try saveSession(&session, parsed: parsed, credentials: login, prompted: prompted, authType: effectiveAuthType, jar: jar)
                try saveHSTS(hsts)
                guard status == .success else { throw ExitCode(status.rawValue) }
                return
            }
            let printer = ExchangePrinter(options: printOptions)
            try await printRequest(prepared, printer: printer)
            let callStart = Date()
            let exchange =
                outputOptions.all && network.follow
                ? try await sendFollowingEachHop(prepared, with: manager, printer: printer)
                : try await send(prepared, with: manager, printer: printer)
            try saveSession(&session, parsed: parsed, credentials: login, prompted: prompted, authType: effectiveAuthType, jar: jar)
            try saveHSTS(hsts)
            guard let response = exchange.response, exchange.error == nil || exchange.body != nil else {
                throw exchange.error ?? FailureReport(status: .error, message: "no response")
            }
            if outputOptions.verbose, let metrics = exchange.metrics {
                let shown = MessageSanitizer.withoutPasswords(response.url?.absoluteString ?? "")
                let lines = ["", "Timings (\(shown)):"] + MetricsWaterfall.lines(for: metrics)
                StandardStreams.writeOutput(Data((lines.joined(separator: "\n") + "\n").utf8))
            }
            if let writeOut {
                let values = WriteOutValues.make(
                    start: callStart, response: response, metrics: exchange.metrics,
                    redirects: exchange.redirects + (exchange.task?.redirectCount ?? 0))
                StandardStreams.writeOutput(Data(writeOut.render(values).utf8))
            }
            if let error = exchange.error { throw error }
            if network.checkStatus, let status = ExitStatus.checking(statusCode: response.statusCode) {
                let head = ResponseHead(task: exchange.task, response: response)
                let text = "courier: warning: HTTP \(head.statusCode) \(head.reasonPhrase)\n"
                StandardStreams.writeError(Data(text.utf8))
                throw ExitCode(status.rawValue)
            }
        } catch let exit as ExitCode {
            throw exit
        } catch {
            let report = FailureReport(
                error, url: url, timeout: network.timeout, maxTime: network.maxTime, maximumRedirects: network.maxRedirects)
            StandardStreams.writeError(Data(report.text.utf8))
            throw ExitCode(report.status.rawValue)
        }
    }

    // MARK: - Exchanges

    /// One exchange; its response head and body are written to stdout as they arrive (the body
    /// streamed, bounded memory; --pretty formats what fits in the session's
    /// maximumResponseBodySize). Multipart uploads gather the body.
    private func send(_ prepared: PreparedRequest, with manager: URLSessionManager, printer: ExchangePrinter) async throws
        -> Exchange
    {
        if outputOptions.reconnect { return try await ReconnectingEventStream.send(prepared, with: manager, printer: printer) }
        if ResponseStreamer.applies(to: prepared) {
            return try await ResponseStreamer.send(
                prepared, body: chunkedBody(prepared), with: manager, printer: printer, streaming: outputOptions.stream)
        }
        let exchange = await ExchangeRunner.send(prepared, with: manager)
        var out = Data()
        if let response = exchange.response, exchange.error == nil || exchange.body != nil {
            if printer.options.responseHeaders {
                out += Data(printer.responseHead(ResponseHead(task: exchange.task, response: response)).utf8)
            }
            if printer.options.responseBody, let body = exchange.body { out += printer.body(body) }
        }
        StandardStreams.writeOutput(out)
        return exchange
    }

    /// ``send(_:with:printer:)`` ended by `deadline` (nil: by the session's own limits only):
    /// when it passes first, the hop is cancelled and the error is the `--max-time` timeout
    /// naming redirect `hop` (the first request, hop 0, is bounded by the session's own).
    private func send(
        _ prepared: PreparedRequest, with manager: URLSessionManager, printer: ExchangePrinter,
        before deadline: ContinuousClock.Instant?, hop: Int
    ) async throws -> Exchange {
        guard let deadline else { return try await send(prepared, with: manager, printer: printer) }
        let expired = CourierError.timedOut(
            url: prepared.urlRequest.url, reason: "\(EngineError.TimeoutKind.deadline.rawValue) timeout on redirect \(hop)")
        guard ContinuousClock.now < deadline else { throw expired }
        // At the deadline the hop's task is cancelled (the command runs one task at a time).
        let timer = Task { () -> Bool in
            do { try await Task.sleep(until: deadline) } catch { return false }
            for task in manager.tasks { task.cancel() }
            return true
        }
        let result: Result<Exchange, any Error>
        do {
            result = .success(try await send(prepared, with: manager, printer: printer))
        } catch {
            result = .failure(error)
        }
        timer.cancel()
        if await timer.value { throw expired }
        return try result.get()
    }

    /// `--all --follow`: each redirect is followed here (the session follows none), so every
    /// hop's request and response are printed. RedirectRule decides each next request (method,
    /// body, credentials dropped across origins); the cookie jar is the session's.
    private func sendFollowingEachHop(_ first: PreparedRequest, with manager: URLSessionManager, printer: ExchangePrinter)
        async throws -> Exchange
    {
        var current = first
        var hops = 0
        // --max-time bounds the whole chain: each hop gets only what is left of it.
        let deadline = network.maxTime.map { ContinuousClock.now + SecondsOption.duration($0) }
        while true {
            let exchange = try await send(current, with: manager, printer: printer, before: hops > 0 ? deadline : nil, hop: hops)
            if exchange.error == nil, let response = exchange.response {
                let location = ResponseHead(task: exchange.task, response: response).value(of: "Location")
                if RedirectRule.isUnfollowable(
                    from: current.urlRequest, statusCode: response.statusCode, location: location, maximumRedirects: 1)
                {
                    throw CourierError.unfollowableRedirect(url: current.urlRequest.url, location: location ?? "")
                }
            }
            guard exchange.error == nil, let response = exchange.response,
                RedirectRule.redirectStatusCodes.contains(response.statusCode),
                let location = ResponseHead(task: exchange.task, response: response).value(of: "Location"),
                let next = RedirectRule.redirectedRequest(from: current.urlRequest, statusCode: response.statusCode, location: location)
            else {
                var last = exchange
                last.redirects = hops
                return last
            }
            guard hops < network.maxRedirects else {
                throw FailureReport(
                    status: .tooManyRedirects,
                    message: "too many redirects (more than \(network.maxRedirects)); the last one pointed to \(next.url?.absoluteString ?? location)",
                    hint: "Raise --max-redirects, or drop --follow to see the redirect response.")
            }
            hops += 1
            let keepsBody = next.httpMethod == current.urlRequest.httpMethod && [307, 308].contains(response.statusCode)
            current = PreparedRequest(
                urlRequest: next, multipart: keepsBody ? current.multipart : nil, bodyFile: keepsBody ? current.bodyFile : nil)
            try await printRequest(current, printer: printer)
        }
    }

    // MARK: - Bodies

    /// The body from `--raw`, or from stdin when it is a pipe or a file and not ignored.
    private func rawBody() throws -> (data: Data, source: String)? {
        if let raw = content.raw { return (Data(raw.utf8), "--raw") }
        guard StandardInputBody.isUsed(kind: StandardInputBody.currentKind(), ignored: content.ignoreStdin) else { return nil }
        return (try StandardInputBody.read(), "stdin")
    }

    /// `-x`: a body in memory deflated when that makes it smaller (always with `-xx`), as HTTPie
    /// does. A form or a file (`@file`, `< file`) is deflated as it is sent instead, by the
    /// session's `RequestCompressor` (bounded memory, chunked): its compressed size is only known
    /// once sent, so `-x` compresses one of ``minimumStreamedCompressionSize`` or more, `-xx` any.
    private func compressBody(_ prepared: inout PreparedRequest) throws {
        guard content.compress > 0 else { return }
        if prepared.multipart != nil || (prepared.bodyFile != nil && !downloads.download) { return }
        var body = prepared.urlRequest.httpBody
        if let file = prepared.bodyFile { body = try RequestBuilder.contents(ofFile: file.url.path) }
        guard let body, !body.isEmpty, let deflated = try OutgoingBody.deflated(body, force: content.compress > 1) else { return }
        prepared.bodyFile = nil
        prepared.urlRequest.httpBody = deflated
        prepared.urlRequest.setValue("deflate", forHTTPHeaderField: "Content-Encoding")
    }

    /// The smallest form or file `-x` compresses as it is sent (see ``compressBody(_:)``).
    static let minimumStreamedCompressionSize: Int64 = 1024

    /// Whether `-x` compresses `prepared`'s body as it is sent (a form or a file).
    private func compressesAsSent(_ prepared: PreparedRequest) -> Bool {
        // (A request serializer leaves an empty body on a POST whose body is a form or a file.)
        guard content.compress > 0, prepared.urlRequest.httpBody?.isEmpty ?? true, prepared.multipart != nil || prepared.bodyFile != nil
        else { return false }
        let size = prepared.multipart?.formData?.contentLength ?? prepared.bodyFile?.length
        return content.compress > 1 || (size ?? .max) >= Self.minimumStreamedCompressionSize
    }

    // MARK: - HSTS

    /// The `--hsts` file's store (empty when the file doesn't exist yet), or nil without `--hsts`.
    /// - Throws: ``RequestBuildError`` naming the file when it can't be used.
    private func openHSTS() throws -> HSTSStore? {
        guard let path = ssl.hsts else { return nil }
        guard !path.isEmpty else { throw RequestBuildError(description: "--hsts needs a file") }
        do {
            return try HSTSStore(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw RequestBuildError(description: "--hsts: \(error)")
        }
    }

    /// Writes what the exchange taught back to the `--hsts` file (atomically).
    private func saveHSTS(_ store: HSTSStore?) throws {
        guard let store, let path = ssl.hsts else { return }
        do {
            try store.write(to: URL(fileURLWithPath: path))
        } catch {
            throw RequestBuildError(description: "--hsts: \(error)")
        }
    }

    /// The value of the last `Content-Length:N` item, when it is a length.
    static func declaredContentLength(_ items: [RequestItem]) -> Int64? {
        let values = items.compactMap { item -> String? in
            guard case .header(let name, let value?) = item, name.lowercased() == "content-length" else { return nil }
            return value
        }
        return values.last.flatMap { Int64($0.trimmingCharacters(in: .whitespaces)) }.flatMap { $0 >= 0 ? $0 : nil }
    }

    /// The body sent instead of the request's own: a streamed stdin, or with `--chunked` the
    /// body as a stream of unknown length, so it goes out chunked.
    private func chunkedBody(_ prepared: PreparedRequest) -> RequestBody? {
        if prepared.streamsStandardInput { return OutgoingBody.standardInput(length: prepared.standardInputLength) }
        guard content.chunked else { return nil }
        if let file = prepared.bodyFile { return OutgoingBody.chunked(file: file.url) }
        return prepared.urlRequest.httpBody.map { OutgoingBody.chunked($0) }
    }

    /// `prepared` with the jar's `Cookie` header (the session's cookies) unless it has one: the
    /// request as the session would send it, for `--curl` and `--offline`.
    static func withCookies(_ prepared: PreparedRequest, from jar: HTTPCookieJar) -> PreparedRequest {
        var shown = prepared
        if shown.urlRequest.value(forHTTPHeaderField: "Cookie") == nil, let requestURL = shown.urlRequest.url,
            let cookies = jar.cookieHeader(for: requestURL)
        {
            shown.urlRequest.setValue(cookies, forHTTPHeaderField: "Cookie")
        }
        return shown
    }

    // MARK: - Sessions

    /// `--session` / `--session-read-only`: the file and what it holds. A read-only session is
    /// created when its file does not exist yet (as HTTPie does), and never updated after.
    private func openSession(url: URL?) throws -> (file: URL, contents: SessionFile, readOnly: Bool)? {
        if sessions.session != nil && sessions.sessionReadOnly != nil {
            throw RequestBuildError(description: "choose one of --session and --session-read-only")
        }
        guard let name = sessions.session ?? sessions.sessionReadOnly, let url else { return nil }
        let file = try SessionFile.location(name, url: url, configDirectory: ConfigFile.directory())
        let exists = FileManager.default.fileExists(atPath: file.path)
        return (file, try SessionFile.load(from: file), sessions.sessionReadOnly != nil && exists)
    }

    /// Records this run's headers, credentials and cookies in the session (not a read-only one).
    private func saveSession(
        _ session: inout (file: URL, contents: SessionFile, readOnly: Bool)?, parsed: RequestArguments,
        credentials: (user: String, password: String)?, prompted: Bool, authType: String, jar: HTTPCookieJar
    ) throws {
        guard var current = session, !current.readOnly else { return }
        current.contents.update(items: parsed.items)
        if let credentials, authentication.auth != nil {
            current.contents.update(
                auth: .init(type: authType, username: credentials.user, password: credentials.password),
                passwordWasPrompted: prompted, storePrompted: sessions.sessionStorePassword)
        }
        current.contents.update(cookies: jar)
        try current.contents.save(to: current.file)
        session = current
    }

    private func printRequest(_ prepared: PreparedRequest, printer: ExchangePrinter) async throws {
        var out = Data()
        let compressed = compressesAsSent(prepared)
        let chunked =
            compressed
            || content.chunked && prepared.multipart == nil
                && (prepared.bodyFile != nil || prepared.urlRequest.httpBody != nil || prepared.streamsStandardInput)
        let bodyLength =
            chunked
            ? nil
            : prepared.multipart?.formData?.contentLength ?? prepared.bodyFile?.length
                ?? prepared.urlRequest.httpBody.map { Int64($0.count) }
        if printer.options.requestHeaders {
            var request = prepared.urlRequest
            if chunked { request.setValue("chunked", forHTTPHeaderField: "Transfer-Encoding") }
            if compressed { request.setValue(ContentCoding.deflate.rawValue, forHTTPHeaderField: "Content-Encoding") }
            out += Data(printer.requestHead(request, bodyLength: bodyLength).utf8)
        }
        if printer.options.requestBody {
            var body = prepared.urlRequest.httpBody ?? Data()
            if let form = prepared.multipart?.formData {
                body = try await Self.preview(of: form)
            } else if let file = prepared.bodyFile {
                body = try Self.preview(of: file)
            }
            if !body.isEmpty { out += printer.body(body) + Data("\n\n".utf8) }
        }
        if !out.isEmpty { StandardStreams.writeOutput(out) }
    }

    /// The `@file` body for `B` when it is small enough (1 MiB); a larger one is not read.
    private static func preview(of file: (url: URL, length: Int64)) throws -> Data {
        guard file.length <= 1 << 20 else {
            return Data("(body of \(file.length) bytes from \(file.url.path), not shown)".utf8)
        }
        // At most the length checked: the file may have grown since.
        let handle = try FileHandle(forReadingFrom: file.url)
        defer { try? handle.close() }
        return try handle.read(upToCount: Int(file.length)) ?? Data()
    }

    /// The multipart body for `B`, when its parts can be read twice and it is small enough.
    private static func preview(of form: MultipartFormData) async throws -> Data {
        guard form.isReplayable, form.contentLength <= 1 << 20 else {
            return Data("(multipart body of \(form.contentLength) bytes, not shown)".utf8)
        }
        var collected = Data()
        try await form.writeBody { collected += $0 }
        return collected
    }
}
