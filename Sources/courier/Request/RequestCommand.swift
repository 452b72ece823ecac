import ArgumentParser
import Courier
import CourierEngine
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

    @Flag(name: [.customShort("j"), .long], help: "Send data fields as a JSON object (the default).")
    var json = false

    @Flag(name: [.customShort("f"), .long], help: "Send data fields as a URL-encoded form (multipart with files).")
    var form = false

    @Flag(help: "Send a multipart/form-data body even without files.")
    var multipart = false

    @Option(name: [.customShort("a"), .long], help: ArgumentHelp("Credentials.", valueName: "user:password"))
    var auth: String?

    @Option(name: [.customShort("A"), .customLong("auth-type")], help: "basic (sent up front) or digest (answers the challenge).")
    var authType: String = "basic"

    @Option(help: ArgumentHelp("Send 'Authorization: Bearer TOKEN'.", valueName: "token"))
    var bearer: String?

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp("Fail when no byte moves for this many seconds (more than 10⁹: no limit).", valueName: "seconds"))
    var timeout: Double?

    @Option(
        name: .customLong("max-time"), parsing: .unconditional,
        help: ArgumentHelp("Fail when the whole exchange takes longer than this many seconds.", valueName: "seconds"))
    var maxTime: Double?

    @Flag(name: [.customShort("F"), .long], help: "Follow redirects (off by default, as in HTTPie).")
    var follow = false

    @Flag(name: .customLong("http1.1"), help: "Speak HTTP/1.1 only (HTTP/2 is used over TLS when the server offers it).")
    var http11 = false

    @Option(name: .customLong("max-redirects"), help: "With --follow: the most redirects before exit status 6.")
    var maxRedirects: Int = 30

    @Option(help: ArgumentHelp("'no' to accept any certificate, or a CA file (PEM or DER) to trust.", valueName: "no|path"))
    var verify: String?

    @Option(name: .customLong("pin-cert"), help: ArgumentHelp("Accept only servers whose chain holds this certificate (PEM or DER).", valueName: "path"))
    var pinCert: String?

    @Option(name: .customLong("pin-mode"), help: "What --pin-cert pins: certificate or public-key.")
    var pinMode: String = "certificate"

    @Option(
        help: ArgumentHelp(
            "Send every request through this proxy: http://, socks5:// (names resolved here) or socks5h:// (names resolved by the proxy), with [user:password@]host[:port] (port 1080 when none, as in curl). Without it, http_proxy, https_proxy, all_proxy and no_proxy apply as in curl (socks5:// and socks5h:// too; upper-case HTTP_PROXY is ignored).",
            valueName: "url"))
    var proxy: String?

    @Option(help: ArgumentHelp(
        "Use an HTTP cache on disk in this folder (RFC 9111: fresh responses are answered without a request, stale ones revalidated; 256 MiB).",
        valueName: "dir"))
    var cache: String?

    @Option(
        name: [.customShort("p"), .customLong("print")],
        help: ArgumentHelp("What to print: H request headers, B request body, h response headers, b response body.", valueName: "HBhb"))
    var printLetters: String?

    @Flag(name: [.customShort("v"), .long], help: "Print the whole exchange (HBhb) and its timings.")
    var verbose = false

    @Option(help: ArgumentHelp("all, colors, format or none (default: all on a terminal, none when piped).", valueName: "style"))
    var pretty: String?

    @Flag(name: .customLong("check-status"), help: "Exit with 3, 4 or 5 for a 3xx, 4xx or 5xx response.")
    var checkStatus = false

    @Flag(name: [.customShort("d"), .long], help: "Save the body to a file, with a progress bar on stderr.")
    var download = false

    @Option(name: [.customShort("o"), .long], help: ArgumentHelp("With --download: the file to write.", valueName: "file"))
    var output: String?

    @Flag(name: [.customShort("c"), .customLong("continue")], help: "With --download -o: resume a partial file.")
    var resume = false

    @OptionGroup var more: HTTPieOptions

    func run() async throws {
        let stdoutIsTerminal = isatty(STDOUT_FILENO) == 1
        var url: URL?
        do {
            let parsed = try RequestArguments.parse(arguments, defaultScheme: try more.scheme())
            url = URL(string: parsed.url)
            let outputOptions = try makeOutputOptions(isTerminal: stdoutIsTerminal)
            var session = try openSession(url: url)
            let (login, prompted) = try credentials(host: url?.host, stored: session?.contents.auth)
            let effectiveAuthType = auth == nil ? session?.contents.auth?.type ?? authType : authType
            var builder = try makeBuilder(parsed, basicAuth: effectiveAuthType == "basic" ? login : nil)
            let stdinFile = more.raw == nil ? StandardInputBody.regularFileAtStart(ignored: more.ignoreStdin) : nil
            // A pipe with --chunked or a Content-Length item: stdin is sent as it is read (bounded
            // memory, HTTPie's rule), unless -x needs it whole.
            let declaredLength = Self.declaredContentLength(parsed.items)
            let streamsPipe =
                (more.chunked || declaredLength != nil) && more.compress == 0 && more.raw == nil && !more.ignoreStdin
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
                prepared.standardInputLength = more.chunked ? nil : declaredLength
            }
            try compressBody(&prepared)
            url = prepared.urlRequest.url
            let jar = HTTPCookieJar()
            session?.contents.restoreCookies(into: jar)
            if more.curl {
                // The curl command for the request as it would go out (with the session's cookies).
                var command = try await CurlCommandOutput.command(for: Self.withCookies(prepared, from: jar))
                if let proxy {
                    // curl takes the same proxy URLs (http, socks5, socks5h); checked as for sending.
                    _ = try Self.parseProxy(proxy)
                    command += " --proxy " + CurlCommandOutput.quote(proxy)
                }
                print(command)
                return
            }
            if more.offline {
                // The request as it would go out: with the session's cookies, which the session
                // would add when sending. The session learns this run's headers and credentials.
                let shown = Self.withCookies(prepared, from: jar)
                try await printRequest(shown, printer: ExchangePrinter(options: try offlineOutputOptions(isTerminal: stdoutIsTerminal)))
                try saveSession(&session, parsed: parsed, credentials: login, prompted: prompted, authType: effectiveAuthType, jar: jar)
                return
            }
            let manager = try makeManager(digestAuth: effectiveAuthType == "digest" ? login : nil, cookieJar: jar)
            if download {
                var request = prepared.urlRequest
                if let file = prepared.bodyFile {
                    // A download task takes its body from the request: read the file (only here).
                    request.httpBody = try RequestBuilder.contents(ofFile: file.url.path)
                }
                let status = try await DownloadFlow(
                    manager: manager, request: request, output: output, resume: resume,
                    printHeaders: verbose || printLetters.map { $0.contains("h") } ?? true
                ).run()
                try saveSession(&session, parsed: parsed, credentials: login, prompted: prompted, authType: effectiveAuthType, jar: jar)
                guard status == .success else { throw ExitCode(status.rawValue) }
                return
            }
            let printer = ExchangePrinter(options: outputOptions)
            try await printRequest(prepared, printer: printer)
            let exchange =
                more.all && follow
                ? try await sendFollowingEachHop(prepared, with: manager, printer: printer)
                : try await send(prepared, with: manager, printer: printer)
            try saveSession(&session, parsed: parsed, credentials: login, prompted: prompted, authType: effectiveAuthType, jar: jar)
            guard let response = exchange.response, exchange.error == nil || exchange.body != nil else {
                throw exchange.error ?? FailureReport(status: .error, message: "no response")
            }
            if verbose, let metrics = exchange.metrics {
                let shown = MessageSanitizer.withoutPasswords(response.url?.absoluteString ?? "")
                let lines = ["", "Timings (\(shown)):"] + MetricsWaterfall.lines(for: metrics)
                FileHandle.standardOutput.write(Data((lines.joined(separator: "\n") + "\n").utf8))
            }
            if let error = exchange.error { throw error }
            if checkStatus, let status = ExitStatus.checking(statusCode: response.statusCode) {
                let head = ResponseHead(task: exchange.task, response: response)
                let text = "courier: warning: HTTP \(head.statusCode) \(head.reasonPhrase)\n"
                FileHandle.standardError.write(Data(text.utf8))
                throw ExitCode(status.rawValue)
            }
        } catch let exit as ExitCode {
            throw exit
        } catch {
            let report = FailureReport(error, url: url, timeout: timeout, maxTime: maxTime, maximumRedirects: maxRedirects)
            FileHandle.standardError.write(Data(report.text.utf8))
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
        if ResponseStreamer.applies(to: prepared) {
            return try await ResponseStreamer.send(
                prepared, body: chunkedBody(prepared), with: manager, printer: printer, streaming: more.stream)
        }
        let exchange = await ExchangeRunner.send(prepared, with: manager)
        var out = Data()
        if let response = exchange.response, exchange.error == nil || exchange.body != nil {
            if printer.options.responseHeaders {
                out += Data(printer.responseHead(ResponseHead(task: exchange.task, response: response)).utf8)
            }
            if printer.options.responseBody, let body = exchange.body { out += printer.body(body) }
        }
        FileHandle.standardOutput.write(out)
        return exchange
    }

    /// `--all --follow`: each redirect is followed here (the session follows none), so every
    /// hop's request and response are printed. RedirectRule decides each next request (method,
    /// body, credentials dropped across origins); the cookie jar is the session's.
    private func sendFollowingEachHop(_ first: PreparedRequest, with manager: URLSessionManager, printer: ExchangePrinter)
        async throws -> Exchange
    {
        var current = first
        var hops = 0
        while true {
            let exchange = try await send(current, with: manager, printer: printer)
            guard exchange.error == nil, let response = exchange.response,
                RedirectRule.redirectStatusCodes.contains(response.statusCode),
                let location = ResponseHead(task: exchange.task, response: response).value(of: "Location"),
                let next = RedirectRule.redirectedRequest(from: current.urlRequest, statusCode: response.statusCode, location: location)
            else { return exchange }
            guard hops < maxRedirects else {
                throw FailureReport(
                    status: .tooManyRedirects,
                    message: "too many redirects (more than \(maxRedirects)); the last one pointed to \(next.url?.absoluteString ?? location)",
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
        if let raw = more.raw { return (Data(raw.utf8), "--raw") }
        guard StandardInputBody.isUsed(kind: StandardInputBody.currentKind(), ignored: more.ignoreStdin) else { return nil }
        return (try StandardInputBody.read(), "stdin")
    }

    /// `-x`: the body deflated when that makes it smaller (always with `-xx`).
    private func compressBody(_ prepared: inout PreparedRequest) throws {
        guard more.compress > 0 else { return }
        guard prepared.multipart == nil else {
            throw RequestBuildError(description: "-x/--compress is not supported for multipart bodies")
        }
        var body = prepared.urlRequest.httpBody
        if let file = prepared.bodyFile { body = try RequestBuilder.contents(ofFile: file.url.path) }
        guard let body, !body.isEmpty, let deflated = try OutgoingBody.deflated(body, force: more.compress > 1) else { return }
        prepared.bodyFile = nil
        prepared.urlRequest.httpBody = deflated
        prepared.urlRequest.setValue("deflate", forHTTPHeaderField: "Content-Encoding")
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
        guard more.chunked else { return nil }
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
        if more.session != nil && more.sessionReadOnly != nil {
            throw RequestBuildError(description: "choose one of --session and --session-read-only")
        }
        guard let name = more.session ?? more.sessionReadOnly, let url else { return nil }
        let file = try SessionFile.location(name, url: url, configDirectory: ConfigFile.directory())
        let exists = FileManager.default.fileExists(atPath: file.path)
        return (file, try SessionFile.load(from: file), more.sessionReadOnly != nil && exists)
    }

    /// Records this run's headers, credentials and cookies in the session (not a read-only one).
    private func saveSession(
        _ session: inout (file: URL, contents: SessionFile, readOnly: Bool)?, parsed: RequestArguments,
        credentials: (user: String, password: String)?, prompted: Bool, authType: String, jar: HTTPCookieJar
    ) throws {
        guard var current = session, !current.readOnly else { return }
        current.contents.update(items: parsed.items)
        if let credentials, auth != nil {
            current.contents.update(
                auth: .init(type: authType, username: credentials.user, password: credentials.password),
                passwordWasPrompted: prompted, storePrompted: more.sessionStorePassword)
        }
        current.contents.update(cookies: jar)
        try current.contents.save(to: current.file)
        session = current
    }

    // MARK: - Setup

    private func makeOutputOptions(isTerminal: Bool) throws -> OutputOptions {
        var options = OutputOptions(isTerminal: isTerminal)
        if more.headers && more.body {
            throw RequestBuildError(description: "choose one of -h/--headers and -b/--body")
        }
        if more.headers || more.body {
            try options.setPrint(more.headers ? "h" : "b")
        } else if verbose {
            try options.setPrint("HBhb")
        } else if let printLetters {
            try options.setPrint(printLetters)
        } else {
            try options.setPrint(isTerminal ? "hb" : "b")
        }
        switch pretty ?? (isTerminal ? "all" : "none") {
        case "all": (options.colors, options.format) = (true, true)
        case "colors": (options.colors, options.format) = (true, false)
        case "format": (options.colors, options.format) = (false, true)
        case "none": (options.colors, options.format) = (false, false)
        case let other:
            throw RequestBuildError(description: "--pretty takes all, colors, format or none; got '\(other)'")
        }
        return options
    }

    /// `--offline`: the request's head and body unless --print (or -v) says otherwise.
    private func offlineOutputOptions(isTerminal: Bool) throws -> OutputOptions {
        var options = try makeOutputOptions(isTerminal: isTerminal)
        if printLetters == nil && !verbose && !more.headers && !more.body { try options.setPrint("HB") }
        return options
    }

    private func makeBuilder(_ parsed: RequestArguments, basicAuth: (user: String, password: String)?) throws
        -> RequestBuilder
    {
        var builder = RequestBuilder(arguments: parsed)
        if [json, form, multipart].filter({ $0 }).count > 1 {
            throw RequestBuildError(description: "choose one of --json, --form and --multipart")
        }
        builder.mode = multipart ? .multipart : form ? .form : .json
        builder.jsonExplicit = json
        builder.bearerToken = bearer
        builder.timeout = try timeout.map { try SecondsOption.checked($0, option: "--timeout") }
        builder.basicAuth = basicAuth
        if resume && (!download || output == nil) {
            throw RequestBuildError(description: "--continue needs --download and -o FILE (the partial file to resume)")
        }
        if output != nil && !download {
            throw RequestBuildError(description: "-o/--output needs --download")
        }
        return builder
    }

    /// `--auth user:password`; `--auth user` asks for the password on a terminal; without
    /// `--auth`, a session's stored credentials (asking for a password it did not keep).
    /// `prompted`: the password was typed at the prompt.
    private func credentials(host: String?, stored: SessionFile.Auth?) throws
        -> (credentials: (user: String, password: String)?, prompted: Bool)
    {
        guard authType == "basic" || authType == "digest" else {
            throw RequestBuildError(description: "--auth-type takes basic or digest; got '\(authType)'")
        }
        guard let auth else {
            guard let stored else { return (nil, false) }
            if let password = stored.password { return ((stored.username, password), false) }
            return (try prompt(user: stored.username, host: host), true)
        }
        if let colon = auth.firstIndex(of: ":") {
            return ((String(auth[..<colon]), String(auth[auth.index(after: colon)...])), false)
        }
        return (try prompt(user: auth, host: host), true)
    }

    /// Asks for `user`'s password on the terminal.
    private func prompt(user auth: String, host: String?) throws -> (user: String, password: String) {
        guard isatty(STDIN_FILENO) == 1 else {
            throw RequestBuildError(
                description: "--auth \(auth) has no password and stdin is not a terminal to ask for one; use --auth \(auth):PASSWORD")
        }
        guard let typed = PasswordPrompt.read("courier: password for \(auth)@\(host ?? "host"): ") else {
            throw RequestBuildError(description: "no password was typed for \(auth); use --auth \(auth):PASSWORD")
        }
        return (auth, typed)
    }

    /// `[scheme://][user:password@]host[:port]` → the engine's proxy setting, read as the
    /// library reads a proxy URL (``EngineProxy/init(url:)``: `http`, `socks5` with names
    /// resolved here, `socks5h` with names sent to the proxy; user and password
    /// percent-decoded). A missing port is 1080, as in curl and in `http_proxy` and its kin.
    static func parseProxy(_ text: String) throws -> EngineProxy {
        do {
            return try EngineProxy(url: text)
        } catch {
            var reason = "\(error)"
            if case .invalidURL(let detail) = error { reason = detail }
            throw RequestBuildError(description: "--proxy: \(reason); expected [http|socks5|socks5h]://[user:password@]host:port")
        }
    }

    private func makeManager(digestAuth: (user: String, password: String)?, cookieJar: HTTPCookieJar) throws
        -> URLSessionManager
    {
        var configuration = SessionConfiguration()
        configuration.cookieJar = cookieJar
        if http11 { configuration.httpVersion = .http1Only }
        if let timeout {
            let seconds = try SecondsOption.checked(timeout, option: "--timeout")
            configuration.timeoutIntervalForRequest = seconds
            configuration.connectTimeout = seconds
        }
        if let maxTime {
            configuration.timeoutIntervalForResource = try SecondsOption.checked(maxTime, option: "--max-time")
        }
        guard maxRedirects >= 0 else { throw RequestBuildError(description: "--max-redirects must be 0 or more") }
        // --all follows each redirect itself, to print every hop.
        configuration.maximumRedirects = follow && !more.all ? maxRedirects : 0
        if let cert = more.cert {
            configuration.tls.clientIdentity = try ClientCertificate.identity(certificatePath: cert, keyPath: more.certKey)
        } else if more.certKey != nil {
            throw RequestBuildError(description: "--cert-key needs --cert")
        }
        if let proxy {
            configuration.proxy = try Self.parseProxy(proxy)
        } else {
            // Like curl: http_proxy, https_proxy, all_proxy and no_proxy (HTTP_PROXY ignored).
            configuration.proxyEnvironment = .process
        }
        if let cache {
            guard !cache.isEmpty else { throw RequestBuildError(description: "--cache needs a folder") }
            let cacheStore = HTTPCache(memoryCapacity: 0, diskCapacity: 256 << 20, directory: URL(fileURLWithPath: cache))
            guard cacheStore.directory != nil else {
                throw RequestBuildError(description: "--cache: the folder \(cache) can't be created or written")
            }
            configuration.cache = cacheStore
        }
        let tls = try TLSOptions(verify: verify, pinnedCertificatePath: pinCert, pinMode: pinMode)
        tls.apply(to: &configuration)
        let manager = URLSessionManager(configuration: configuration)
        try tls.apply(to: manager)
        let serializer = HTTPResponseSerializer()
        serializer.acceptableStatusCodes = nil  // every status is delivered; the exit status is ours to decide
        serializer.acceptableContentTypes = nil
        manager.responseSerializer = serializer
        if let digestAuth {
            manager.credential = URLCredential(user: digestAuth.user, password: digestAuth.password, persistence: .forSession)
            manager.credentialSchemes = .digest  // never downgraded to Basic
        }
        return manager
    }

    private func printRequest(_ prepared: PreparedRequest, printer: ExchangePrinter) async throws {
        var out = Data()
        let chunked =
            more.chunked && prepared.multipart == nil
            && (prepared.bodyFile != nil || prepared.urlRequest.httpBody != nil || prepared.streamsStandardInput)
        let bodyLength =
            chunked
            ? nil
            : prepared.multipart?.formData?.contentLength ?? prepared.bodyFile?.length
                ?? prepared.urlRequest.httpBody.map { Int64($0.count) }
        if printer.options.requestHeaders {
            var request = prepared.urlRequest
            if chunked { request.setValue("chunked", forHTTPHeaderField: "Transfer-Encoding") }
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
        if !out.isEmpty { FileHandle.standardOutput.write(out) }
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
