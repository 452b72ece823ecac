import ArgumentParser
import Courier
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// How a request command sets itself up from its options: the request builder, the
/// credentials, the proxy and the session.
extension RequestCommand {
    /// The request builder for `parsed`, with the content, authentication and timeout options.
    func makeBuilder(_ parsed: RequestArguments, basicAuth: (user: String, password: String)?) throws
        -> RequestBuilder
    {
        var builder = RequestBuilder(arguments: parsed)
        builder.mode = try content.mode()
        builder.jsonExplicit = content.json
        builder.bearerToken = authentication.bearer
        builder.timeout = try network.timeout.map { try SecondsOption.checked($0, option: "--timeout") }
        builder.basicAuth = basicAuth
        try downloads.checkCombination()
        return builder
    }

    /// `--auth user:password`; `--auth user` asks for the password on a terminal; without
    /// `--auth`, a session's stored credentials (asking for a password it did not keep).
    /// `prompted`: the password was typed at the prompt.
    func credentials(host: String?, stored: SessionFile.Auth?) throws
        -> (credentials: (user: String, password: String)?, prompted: Bool)
    {
        let authType = authentication.authType
        guard authType == "basic" || authType == "digest" else {
            throw RequestBuildError(description: "--auth-type takes basic or digest; got '\(authType)'")
        }
        guard let auth = authentication.auth else {
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
    func prompt(user auth: String, host: String?) throws -> (user: String, password: String) {
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

    /// The session the command sends through: its configuration from the network, TLS, cache
    /// and proxy options, a serializer that delivers every status, and the interceptors asked for.
    func makeManager(digestAuth: (user: String, password: String)?, cookieJar: HTTPCookieJar, hsts: HSTSStore? = nil) throws
        -> URLSessionManager
    {
        var configuration = SessionConfiguration()
        configuration.cookieJar = cookieJar
        configuration.hsts = hsts
        if network.http11 { configuration.httpVersion = .http1Only }
        if let timeout = network.timeout {
            let seconds = try SecondsOption.checked(timeout, option: "--timeout")
            configuration.timeoutIntervalForRequest = seconds
            configuration.connectTimeout = seconds
        }
        if let maxTime = network.maxTime {
            configuration.timeoutIntervalForResource = try SecondsOption.checked(maxTime, option: "--max-time")
        }
        guard network.maxRedirects >= 0 else { throw RequestBuildError(description: "--max-redirects must be 0 or more") }
        // --all follows each redirect itself, to print every hop.
        configuration.maximumRedirects = network.follow && !outputOptions.all ? network.maxRedirects : 0
        if let cert = ssl.cert {
            configuration.tls.clientIdentity = try ClientCertificate.identity(certificatePath: cert, keyPath: ssl.certKey)
        } else if ssl.certKey != nil {
            throw RequestBuildError(description: "--cert-key needs --cert")
        }
        if let proxy = network.proxy {
            configuration.proxy = try Self.parseProxy(proxy)
        } else {
            // Like curl: http_proxy, https_proxy, all_proxy and no_proxy (HTTP_PROXY ignored).
            configuration.proxyEnvironment = .process
        }
        let targets = try network.connectionTargets()
        configuration.unixSocketPaths = targets.unixSocketPaths
        configuration.resolveOverrides = targets.resolveOverrides
        configuration.connectToOverrides = targets.connectToOverrides
        if let cache = network.cache {
            guard !cache.isEmpty else { throw RequestBuildError(description: "--cache needs a folder") }
            let cacheStore = HTTPCache(memoryCapacity: 0, diskCapacity: 256 << 20, directory: URL(fileURLWithPath: cache))
            guard cacheStore.directory != nil else {
                throw RequestBuildError(description: "--cache: the folder \(cache) can't be created or written")
            }
            configuration.cache = cacheStore
        }
        let tls = try TLSOptions(verify: ssl.verify, pinnedCertificatePath: ssl.pinCert, pinMode: ssl.pinMode)
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
        if content.compress > 0 {
            // Forms and files (see compressBody): a body in memory was already handled.
            manager.interceptor = RequestCompressor(
                coding: .deflate, minimumSize: content.compress > 1 ? 0 : Self.minimumStreamedCompressionSize,
                shouldCompress: { ($0.httpBody?.isEmpty ?? true) && $0.value(forHTTPHeaderField: "Content-Encoding") == nil })
        }
        manager.interceptor = try NetworkWait.interceptor(network, after: manager.interceptor)
        return manager
    }
}
