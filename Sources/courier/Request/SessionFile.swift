import Courier
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A `--session` file: the cookies, credentials and headers kept between runs, as JSON in
/// HTTPie's layout (`$XDG_CONFIG_HOME/courier/sessions/HOST_PORT/NAME.json`, or a path given
/// with a `/`). Written atomically (a temporary file in the same folder, renamed) with mode 0600.
struct SessionFile: Codable, Equatable {
    /// A header sent on every request of the session.
    struct Header: Codable, Equatable {
        var name: String
        var value: String
    }

    /// A cookie as the jar held it.
    struct Cookie: Codable, Equatable {
        var name: String
        var value: String
        var domain: String
        var hostOnly: Bool
        var path: String
        /// Seconds since 1970, or nil for a session cookie.
        var expires: Double?
        var secure: Bool
        var httpOnly: Bool
    }

    /// The credentials: `basic` or `digest`, the user and (unless typed at a prompt and not
    /// asked to be kept) the password.
    struct Auth: Codable, Equatable {
        var type: String
        var username: String
        var password: String?
    }

    struct Meta: Codable, Equatable {
        var about = "Courier session file"
        var help = "https://httpie.io/docs/cli/sessions (same idea: cookies, auth and headers reused per host)"
    }

    var meta = Meta()
    var headers: [Header] = []
    var cookies: [Cookie] = []
    var auth: Auth?

    enum CodingKeys: String, CodingKey {
        case meta = "__meta__"
        case headers, cookies, auth
    }

    // MARK: - Where

    /// HTTPie's folder name for a URL's host: the host, then `_PORT` when the URL names a port
    /// (':' in an IPv6 address becomes '_' too).
    static func directoryName(for url: URL) -> String {
        let host = (url.host ?? "localhost").trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        let name = url.port.map { "\(host):\($0)" } ?? host
        return name.replacingOccurrences(of: ":", with: "_")
    }

    /// The file of `--session nameOrPath` for `url`: a path when it holds a `/`, else
    /// `CONFIG/sessions/HOST_PORT/NAME.json`.
    /// - Throws: ``RequestBuildError`` for a name that can't be a file name.
    static func location(_ nameOrPath: String, url: URL, configDirectory: URL) throws -> URL {
        if nameOrPath.contains("/") { return URL(fileURLWithPath: nameOrPath) }
        guard !nameOrPath.isEmpty, nameOrPath != ".", nameOrPath != "..",
            !RequestItem.containsControlCharacter(nameOrPath)
        else {
            throw RequestBuildError(description: "--session '\(nameOrPath)' is not a usable session name")
        }
        // Foundation decodes the host (`%2e%2e` is `..`, `%2F` is `/`): it must stay one folder.
        let folder = directoryName(for: url)
        guard !folder.isEmpty, folder != ".", folder != "..", !folder.contains("/"),
            !RequestItem.containsControlCharacter(folder)
        else {
            throw RequestBuildError(description: "--session: the host '\(folder)' can't name a session folder")
        }
        return configDirectory.appendingPathComponent("sessions").appendingPathComponent(folder)
            .appendingPathComponent(nameOrPath + ".json")
    }

    // MARK: - Reading and writing

    /// The most cookies a session file may hold: as many as the cookie jar keeps (3,000).
    static let maximumCookies = HTTPCookieJar.Limits().maximumCookies
    /// The most headers a session file may hold: 1,000 (servers take about 100).
    static let maximumHeaders = 1_000

    /// The session stored at `url`; an empty one when there is no file yet.
    /// - Throws: ``RequestBuildError`` naming the file when it can't be read or is not a session
    ///   (including one whose credentials are neither basic nor digest, or one holding more than
    ///   ``maximumCookies`` cookies or ``maximumHeaders`` headers).
    static func load(from url: URL) throws -> SessionFile {
        guard let data = try ConfigFile.smallFile(url, what: "the session file") else { return SessionFile() }
        let session: SessionFile
        do {
            session = try JSONDecoder().decode(SessionFile.self, from: data)
        } catch {
            throw RequestBuildError(description: "the session file \(url.path) can't be read: \(error)")
        }
        // Restoring a cookie or setting a header costs a pass over those already there: counts
        // beyond what courier ever writes (the jar keeps 3,000 cookies) would take minutes.
        if session.cookies.count > maximumCookies || session.headers.count > maximumHeaders {
            throw RequestBuildError(
                description: "the session file \(url.path) holds \(session.cookies.count) cookies and \(session.headers.count) headers; "
                    + "a session keeps at most \(maximumCookies) cookies and \(maximumHeaders) headers")
        }
        // A header with CR/LF would be dropped by the request without a word, and a name that is
        // not a token is refused when typed (`Name:value`): the file keeps the same rules. A
        // cookie's fields go into a Set-Cookie line (`;` would add attributes).
        let headerTexts = session.headers.flatMap { [$0.name, $0.value] }
        let cookieTexts = session.cookies.flatMap { [$0.name, $0.value, $0.domain, $0.path] }
        let badName = session.headers.map(\.name).first { $0.isEmpty || !$0.unicodeScalars.allSatisfy(RequestItem.isTokenCharacter) }
        if let bad = badName ?? headerTexts.first(where: RequestItem.containsControlCharacter)
            ?? cookieTexts.first(where: { RequestItem.containsControlCharacter($0) || $0.contains(";") })
        {
            throw RequestBuildError(description: "the session file \(url.path) holds an unusable header or cookie field \(bad.debugDescription)")
        }
        // Credentials of another type would be dropped without a word (courier sends basic or digest).
        if let type = session.auth?.type, type != "basic", type != "digest" {
            throw RequestBuildError(
                description: "the session file \(url.path) holds credentials of type '\(type)'; courier sends basic or digest")
        }
        return session
    }

    /// Writes the session to `url` atomically with mode 0600 (its folders 0700 when made).
    /// - Throws: ``RequestBuildError`` naming the file.
    func save(to url: URL) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        let folder = url.deletingLastPathComponent()
        let temporary = folder.appendingPathComponent(".\(url.lastPathComponent).\(getpid()).tmp")
        do {
            try FileManager.default.createDirectory(
                at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            let data = try encoder.encode(self) + Data("\n".utf8)
            unlink(temporary.path)  // a leftover of a run that died; never written through a link
            let descriptor = open(temporary.path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
            guard descriptor >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
            let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
            try handle.write(contentsOf: data)
            try handle.synchronize()
            try handle.close()
            guard rename(temporary.path, url.path) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        } catch {
            unlink(temporary.path)
            throw RequestBuildError(description: "the session file \(url.path) can't be written: \(error)")
        }
    }

    // MARK: - Updating

    /// Records the credentials used; a password typed at the prompt is kept only with
    /// `storePrompted` (`--session-store-password`).
    mutating func update(auth new: Auth, passwordWasPrompted: Bool, storePrompted: Bool) {
        var stored = new
        if passwordWasPrompted && !storePrompted { stored.password = nil }
        auth = stored
    }

    /// Records the headers typed for this request, as HTTPie does: every one but `Content-*`,
    /// `If-*` and `Cookie` (cookies live in the jar); a header removed with `Name:` is forgotten.
    mutating func update(items: [RequestItem]) {
        for item in items {
            let name: String
            let value: String?
            switch item {
            case .header(let header, let text):
                (name, value) = (header, text)
            case .emptyHeader(let header):
                (name, value) = (header, "")
            default: continue
            }
            let lower = name.lowercased()
            if lower.hasPrefix("content-") || lower.hasPrefix("if-") || lower == "cookie" { continue }
            headers.removeAll { $0.name.lowercased() == lower }
            if let value { headers.append(Header(name: name, value: value)) }
        }
    }

    /// Records the jar's cookies.
    mutating func update(cookies jar: HTTPCookieJar) {
        cookies = jar.allCookies.map { cookie in
            Cookie(
                name: cookie.name, value: cookie.value, domain: cookie.domain, hostOnly: cookie.isHostOnly,
                path: cookie.path, expires: cookie.expiresDate?.timeIntervalSince1970, secure: cookie.isSecure,
                httpOnly: cookie.isHTTPOnly)
        }
    }

    /// Puts the stored cookies back in `jar` (expired ones are dropped by the jar).
    func restoreCookies(into jar: HTTPCookieJar, now: Date = Date()) {
        for cookie in cookies {
            var field = "\(cookie.name)=\(cookie.value); Path=\(cookie.path)"
            if !cookie.hostOnly { field += "; Domain=\(cookie.domain)" }
            if let expires = cookie.expires {
                let seconds = expires - now.timeIntervalSince1970
                guard seconds > 0, seconds.isFinite else { continue }
                field += "; Max-Age=\(Int(min(seconds, 400 * 86_400)))"
            }
            if cookie.secure { field += "; Secure" }
            if cookie.httpOnly { field += "; HttpOnly" }
            let host = cookie.domain.hasPrefix(".") ? String(cookie.domain.dropFirst()) : cookie.domain
            guard let url = URL(string: (cookie.secure ? "https://" : "http://") + host + cookie.path) else { continue }
            jar.storeCookies(fromSetCookieFields: [field], for: url)
        }
    }
}
