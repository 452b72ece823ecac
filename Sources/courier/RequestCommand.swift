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

    @Option(name: .customLong("max-redirects"), help: "With --follow: the most redirects before exit status 6.")
    var maxRedirects: Int = 30

    @Option(help: ArgumentHelp("'no' to accept any certificate, or a CA file (PEM or DER) to trust.", valueName: "no|path"))
    var verify: String?

    @Option(name: .customLong("pin-cert"), help: ArgumentHelp("Accept only servers whose chain holds this certificate (PEM or DER).", valueName: "path"))
    var pinCert: String?

    @Option(name: .customLong("pin-mode"), help: "What --pin-cert pins: certificate or public-key.")
    var pinMode: String = "certificate"

    @Option(help: ArgumentHelp("Send every request through this forward proxy: http://[user:password@]host:port.", valueName: "url"))
    var proxy: String?

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

    func run() async throws {
        let stdoutIsTerminal = isatty(STDOUT_FILENO) == 1
        var url: URL?
        do {
            let parsed = try RequestArguments.parse(arguments)
            url = URL(string: parsed.url)
            let outputOptions = try makeOutputOptions(isTerminal: stdoutIsTerminal)
            let credentials = try credentials(host: url?.host)
            let builder = try makeBuilder(parsed, basicAuth: authType == "basic" ? credentials : nil)
            let prepared = try builder.build()
            url = prepared.urlRequest.url
            let manager = try makeManager(digestAuth: authType == "digest" ? credentials : nil)
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
                guard status == .success else { throw ExitCode(status.rawValue) }
                return
            }
            let printer = ExchangePrinter(options: outputOptions)
            try await printRequest(prepared, printer: printer)
            // The body streams to stdout as it arrives (bounded memory; --pretty formats what
            // fits in the session's maximumResponseBodySize). Multipart uploads gather it.
            let streams = ResponseStreamer.applies(to: prepared)
            let exchange =
                streams
                ? try await ResponseStreamer.send(prepared, with: manager, printer: printer)
                : await ExchangeRunner.send(prepared, with: manager)
            guard let response = exchange.response, exchange.error == nil || exchange.body != nil else {
                throw exchange.error ?? FailureReport(status: .error, message: "no response")
            }
            var out = Data()
            if outputOptions.responseHeaders, !streams { out += Data(printer.responseHead(response).utf8) }
            if outputOptions.responseBody, let body = exchange.body { out += printer.body(body) }
            if verbose, let metrics = exchange.metrics {
                let shown = MessageSanitizer.withoutPasswords(response.url?.absoluteString ?? "")
                let lines = ["", "Timings (\(shown)):"] + MetricsWaterfall.lines(for: metrics)
                out += Data((lines.joined(separator: "\n") + "\n").utf8)
            }
            FileHandle.standardOutput.write(out)
            if let error = exchange.error { throw error }
            if checkStatus, let status = ExitStatus.checking(statusCode: response.statusCode) {
                let text = "courier: warning: HTTP \(response.statusCode) \(ExchangePrinter.reasonPhrase(response.statusCode))\n"
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

    // MARK: - Setup

    private func makeOutputOptions(isTerminal: Bool) throws -> OutputOptions {
        var options = OutputOptions(isTerminal: isTerminal)
        if verbose {
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

    /// `--auth user:password`; `--auth user` asks for the password on a terminal.
    private func credentials(host: String?) throws -> (user: String, password: String)? {
        guard let auth else { return nil }
        guard authType == "basic" || authType == "digest" else {
            throw RequestBuildError(description: "--auth-type takes basic or digest; got '\(authType)'")
        }
        if let colon = auth.firstIndex(of: ":") {
            return (String(auth[..<colon]), String(auth[auth.index(after: colon)...]))
        }
        guard isatty(STDIN_FILENO) == 1 else {
            throw RequestBuildError(
                description: "--auth \(auth) has no password and stdin is not a terminal to ask for one; use --auth \(auth):PASSWORD")
        }
        guard let typed = PasswordPrompt.read("courier: password for \(auth)@\(host ?? "host"): ") else {
            throw RequestBuildError(description: "no password was typed for \(auth); use --auth \(auth):PASSWORD")
        }
        return (auth, typed)
    }

    /// `http://[user:password@]host:port` (or `host:port`) → the engine's proxy setting.
    static func parseProxy(_ text: String) throws -> EngineProxy {
        let withScheme = text.contains("://") ? text : "http://" + text
        guard let components = URLComponents(string: withScheme), components.scheme?.lowercased() == "http",
            let host = components.host, !host.isEmpty
        else {
            throw RequestBuildError(description: "--proxy \(text) is not an http://host:port URL")
        }
        return EngineProxy(
            host: host.trimmingCharacters(in: CharacterSet(charactersIn: "[]")), port: components.port ?? 80,
            username: components.user?.removingPercentEncoding, password: components.password?.removingPercentEncoding)
    }

    private func makeManager(digestAuth: (user: String, password: String)?) throws -> URLSessionManager {
        var configuration = SessionConfiguration()
        if let timeout {
            let seconds = try SecondsOption.checked(timeout, option: "--timeout")
            configuration.timeoutIntervalForRequest = seconds
            configuration.connectTimeout = seconds
        }
        if let maxTime {
            configuration.timeoutIntervalForResource = try SecondsOption.checked(maxTime, option: "--max-time")
        }
        guard maxRedirects >= 0 else { throw RequestBuildError(description: "--max-redirects must be 0 or more") }
        configuration.maximumRedirects = follow ? maxRedirects : 0
        if let proxy { configuration.proxy = try Self.parseProxy(proxy) }
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
        let bodyLength =
            prepared.multipart?.formData?.contentLength ?? prepared.bodyFile?.length
            ?? prepared.urlRequest.httpBody.map { Int64($0.count) }
        if printer.options.requestHeaders { out += Data(printer.requestHead(prepared.urlRequest, bodyLength: bodyLength).utf8) }
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
