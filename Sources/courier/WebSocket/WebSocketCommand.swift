import ArgumentParser
import Courier
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `courier ws URL [Header:Value ...]`: a WebSocket client on the session's WebSocket task.
/// Each line of standard input goes out as a text message; each message received is printed
/// on its own line; at the end of standard input it closes with 1000 and waits (bounded) for
/// the server's close.
struct WebSocketCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ws",
        abstract: "Open a WebSocket: send standard input's lines as messages, print what arrives.",
        usage: "courier ws URL [Header:Value ...]",
        discussion: """
            URL: ws:// or wss:// (http:// and https:// mean the same; no scheme means ws://, or wss:// \
            with --https and for courier-https). A binary message is printed as [binary N bytes] on a \
            terminal and as its raw bytes to a pipe.

            Exit status: 0 after a normal close (1000 or 1001); 1 after any other close (1006 included) \
            or a refused handshake (the message names the code and reason, or the status); 2 for usage \
            errors and timeouts; 7 when the server cannot be reached; 8 when TLS fails.
            """
    )

    @Argument(help: ArgumentHelp("URL [Header:Value ...]", valueName: "url"))
    var arguments: [String] = []

    @Flag(name: [.customShort("v"), .long], help: "Print the handshake (request and response heads) and ping round trips.")
    var verbose = false

    @Option(name: .long, help: ArgumentHelp("Send a ping every SECONDS (printed with -v).", valueName: "seconds"))
    var ping: Double?

    @Option(name: .long, help: ArgumentHelp("Connect and handshake timeout in seconds.", valueName: "seconds"))
    var timeout: Double?

    @Option(name: .long, help: ArgumentHelp("[http|socks5|socks5h]://[user:password@]host:port", valueName: "url"))
    var proxy: String?

    @Flag(name: .long, help: "Default to wss:// for a URL without a scheme.")
    var https = false

    @OptionGroup(title: "SSL") var ssl: SSLOptions

    func run() async throws {
        var url: URL?
        do {
            let (target, headers) = try parse()
            url = target
            let manager = try makeManager()
            var request = URLRequest(url: target)
            for (name, value) in headers { request.addValue(value, forHTTPHeaderField: name) }
            let socket = manager.webSocketTask(with: request)
            socket.resume()
            let status = try await run(socket, request: request)
            throw ExitCode(status.rawValue)
        } catch let exit as ExitCode {
            throw exit
        } catch {
            let report = WebSocketReport.failure(error, url: url, timeout: timeout)
            StandardStreams.writeError(Data(report.text.utf8))
            throw ExitCode(report.status.rawValue)
        }
    }

    /// Runs the open socket: stdin's lines out, messages in, until the socket closes. The exit status.
    private func run(_ socket: WebSocketTask, request: URLRequest) async throws -> ExitStatus {
        // The first send waits for the handshake; a failed handshake throws here.
        _ = try await socket.sendPing()
        if verbose { printHandshake(socket, request: request) }
        let printsBinaryRaw = isatty(STDOUT_FILENO) != 1
        let verbose = self.verbose
        let reader = Task {
            for try await message in socket.messages {
                switch message {
                case .string(let text):
                    StandardStreams.writeOutput(Data((text + "\n").utf8))
                case .data(let data):
                    if printsBinaryRaw {
                        StandardStreams.writeOutput(data)
                    } else {
                        StandardStreams.writeOutput(Data("[binary \(data.count) bytes]\n".utf8))
                    }
                }
            }
        }
        let pinger: Task<Void, Never>? = ping.map { seconds in
            Task {
                while !Task.isCancelled {
                    try? await Task.sleep(for: SecondsOption.duration(seconds))
                    guard let roundTrip = try? await socket.sendPing() else { return }
                    if verbose { StandardStreams.writeError(Data("* pong in \(roundTrip)\n".utf8)) }
                }
            }
        }
        let sender = Task {
            while let line = readLine(strippingNewline: true) {
                try await socket.send(.string(line))
            }
            socket.cancel(with: .normalClosure, reason: nil)
        }
        let outcome = await reader.result
        pinger?.cancel()
        sender.cancel()
        switch outcome {
        case .success:
            return .success
        case .failure(let error):
            throw error
        }
    }

    private func printHandshake(_ socket: WebSocketTask, request: URLRequest) {
        let sent = socket.currentRequest ?? request
        var lines = ["GET \(sent.url?.absoluteString ?? "") (WebSocket handshake)"]
        for (name, value) in (sent.allHTTPHeaderFields ?? [:]).sorted(by: { $0.key < $1.key }) { lines.append("\(name): \(value)") }
        if let response = socket.response {
            lines.append("")
            lines.append("HTTP/1.1 \(response.statusCode) Switching Protocols")
            for (name, value) in response.allHeaderFields.sorted(by: { "\($0.key)" < "\($1.key)" }) { lines.append("\(name): \(value)") }
        }
        StandardStreams.writeError(Data((lines.joined(separator: "\n") + "\n\n").utf8))
    }

    /// The URL (with the default scheme) and the header items.
    private func parse() throws -> (URL, [(String, String)]) {
        guard let first = arguments.first else { throw RequestBuildError(description: "courier ws needs a URL") }
        var text = first
        if text.hasPrefix(":") { text = "localhost" + text }
        let invokedAs = CommandLine.arguments.first.map { URL(fileURLWithPath: $0).lastPathComponent } ?? "courier"
        if !text.contains("://") { text = (https || invokedAs == "courier-https" ? "wss://" : "ws://") + text }
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), ["ws", "wss", "http", "https"].contains(scheme),
            url.host != nil
        else {
            throw RequestBuildError(description: "not a WebSocket URL: \(first) (expected ws://host/path or wss://host/path)")
        }
        var headers: [(String, String)] = []
        for item in arguments.dropFirst() {
            guard let colon = item.firstIndex(of: ":"), colon != item.startIndex else {
                throw RequestBuildError(description: "courier ws takes Header:Value items only, not \(item)")
            }
            headers.append((String(item[..<colon]), String(item[item.index(after: colon)...]).trimmingCharacters(in: .whitespaces)))
        }
        return (url, headers)
    }

    private func makeManager() throws -> URLSessionManager {
        var configuration = SessionConfiguration()
        configuration.cookieJar = HTTPCookieJar()
        if let timeout {
            let seconds = try SecondsOption.checked(timeout, option: "--timeout")
            configuration.timeoutIntervalForRequest = seconds
            configuration.connectTimeout = seconds
        }
        if let ping { _ = try SecondsOption.checked(ping, option: "--ping") }
        if let cert = ssl.cert {
            configuration.tls.clientIdentity = try ClientCertificate.identity(certificatePath: cert, keyPath: ssl.certKey)
        } else if ssl.certKey != nil {
            throw RequestBuildError(description: "--cert-key needs --cert")
        }
        if let proxy {
            configuration.proxy = try RequestCommand.parseProxy(proxy)
        } else {
            configuration.proxyEnvironment = .process
        }
        let tls = try TLSOptions(verify: ssl.verify, pinnedCertificatePath: ssl.pinCert, pinMode: ssl.pinMode)
        tls.apply(to: &configuration)
        let manager = URLSessionManager(configuration: configuration)
        try tls.apply(to: manager)
        return manager
    }
}
