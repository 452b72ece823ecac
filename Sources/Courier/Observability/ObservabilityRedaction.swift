public import Foundation
import CourierEngine

/// What is hidden before a URL or a header is logged or put on a span: header values of
/// credential headers, the user and password of a URL, and the values of query parameters
/// named like secrets. Pure rules over plain values; the session applies them to every record.
///
/// Redacted values become `REDACTED` (OpenTelemetry's convention for `url.full`); the name is
/// kept, so a reader still sees that a token was sent.
public struct ObservabilityRedaction: Sendable, Equatable {
    /// Header names (lowercased) whose values are hidden.
    /// Default: ``defaultSensitiveHeaders``.
    public var sensitiveHeaders: Set<String>
    /// Query parameter names (lowercased, `-` read as `_`) whose values are hidden.
    /// Default: ``defaultSensitiveQueryParameters``.
    public var sensitiveQueryParameters: Set<String>
    /// Last words of a query parameter name (split at `_`, `-` or `.`) that make it secret
    /// too, e.g. `token` covers `refresh_token` and `x-csrf-token`.
    /// Default: ``defaultSensitiveQueryParameterSuffixes``.
    public var sensitiveQueryParameterSuffixes: Set<String>

    /// What replaces a hidden value.
    public static let placeholder = "REDACTED"

    /// `authorization`, `proxy-authorization`, `cookie`, `set-cookie`, `x-api-key`,
    /// `x-auth-token`, `x-amz-security-token`: broader than what a redirect to another origin
    /// drops (``RedirectRule/crossOriginSensitiveHeaders``), since hiding a value costs nothing.
    public static let defaultSensitiveHeaders: Set<String> = CredentialHeaders.redactedFields

    /// `token`, `access_token`, `refresh_token`, `id_token`, `api_key`, `apikey`, `key`,
    /// `password`, `passwd`, `pwd`, `secret`, `client_secret`, `signature`, `sig`, `auth`,
    /// `code` (OAuth's authorization code), `session`, `sessionid`, `awsaccesskeyid`,
    /// `x_amz_signature`, `x_amz_credential`, `x_amz_security_token`, `x_goog_signature`,
    /// `x_goog_credential`.
    public static let defaultSensitiveQueryParameters: Set<String> = [
        "token", "access_token", "refresh_token", "id_token", "api_key", "apikey", "key", "password", "passwd", "pwd",
        "secret", "client_secret", "signature", "sig", "auth", "code", "session", "sessionid", "awsaccesskeyid",
        "x_amz_signature", "x_amz_credential", "x_amz_security_token", "x_goog_signature", "x_goog_credential",
    ]

    /// `token`, `key`, `secret`, `password`, `signature`, `credential`.
    public static let defaultSensitiveQueryParameterSuffixes: Set<String> = [
        "token", "key", "secret", "password", "signature", "credential",
    ]

    /// The default rules (the three default lists).
    public static let `default` = ObservabilityRedaction()

    /// Rules with the given lists (each default when omitted). Names are compared lowercased.
    public init(
        sensitiveHeaders: Set<String> = Self.defaultSensitiveHeaders,
        sensitiveQueryParameters: Set<String> = Self.defaultSensitiveQueryParameters,
        sensitiveQueryParameterSuffixes: Set<String> = Self.defaultSensitiveQueryParameterSuffixes
    ) {
        self.sensitiveHeaders = Set(sensitiveHeaders.map { $0.lowercased() })
        self.sensitiveQueryParameters = Set(sensitiveQueryParameters.map { Self.normalized($0) })
        self.sensitiveQueryParameterSuffixes = Set(sensitiveQueryParameterSuffixes.map { $0.lowercased() })
    }

    /// Whether a header's value is hidden: its name is in ``sensitiveHeaders``, or is not an
    /// RFC 9110 token (`Authorization `, `Cookie:`: never sent, the engine refuses the request,
    /// but recorded before that, and may be a credential header misspelled).
    public func isSensitiveHeader(_ name: String) -> Bool {
        sensitiveHeaders.contains(name.lowercased()) || !HeaderValidation.isToken(name)
    }

    /// A header's value as it may be shown: ``placeholder`` for a sensitive header.
    public func redactedHeaderValue(name: String, value: String) -> String {
        isSensitiveHeader(name) ? Self.placeholder : value
    }

    /// Whether a query parameter's value is hidden: its name is in
    /// ``sensitiveQueryParameters`` or its last word is in ``sensitiveQueryParameterSuffixes``.
    /// A nested or array name (`user[password]`, `token[]`, as Courier's query encoding writes
    /// them) is hidden when any of its parts is.
    public func isSensitiveQueryParameter(_ name: String) -> Bool {
        name.split(whereSeparator: { $0 == "[" || $0 == "]" }).contains { isSensitiveName(String($0)) }
    }

    /// One part of a query parameter's name, by the two lists.
    private func isSensitiveName(_ name: String) -> Bool {
        let name = Self.normalized(name)
        if sensitiveQueryParameters.contains(name) { return true }
        guard let last = name.split(separator: "_").last else { return false }
        return sensitiveQueryParameterSuffixes.contains(String(last))
    }

    /// The URL as it may be shown: a user and password become `REDACTED:REDACTED` (a user
    /// alone `REDACTED`), sensitive query values become `REDACTED`; the fragment is dropped
    /// (it never leaves the client). Everything else is kept as written.
    public func redactedURL(_ url: URL) -> String {
        redactedURLReportingChange(url, depth: 0, nested: true).string
    }

    /// How deep URLs nested in query values are taken apart; deeper ones are hidden whole.
    private static let maximumNesting = 4

    /// ``redactedURL(_:)``, and whether anything was hidden or dropped (a nested URL with
    /// nothing to hide is kept exactly as it came, not as Foundation would write it again).
    /// `nested`: false leaves URLs in query values unread.
    private func redactedURLReportingChange(_ url: URL, depth: Int, nested: Bool) -> (string: String, changed: Bool) {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: true) else {
            return (Self.placeholder, true)  // not a URL we can take apart: show nothing of it
        }
        var changed = components.fragment != nil
        components.fragment = nil
        if components.percentEncodedUser != nil {
            components.percentEncodedUser = Self.placeholder
            if components.percentEncodedPassword != nil { components.percentEncodedPassword = Self.placeholder }
            changed = true
        } else if components.percentEncodedPassword != nil {
            components.percentEncodedPassword = Self.placeholder
            changed = true
        }
        if let query = components.percentEncodedQuery {
            let redacted = redactedQuery(query, depth: depth, nested: nested)
            if redacted != query {
                components.percentEncodedQuery = redacted
                changed = true
            }
        }
        guard let string = components.string else { return (Self.placeholder, true) }
        return (string, changed)
    }

    /// A percent-encoded query with sensitive values replaced; order, names and separators kept.
    /// A value that holds a URL (`?next=http://u:p@h/`, also percent-encoded, or `//u:p@h/`)
    /// becomes that URL redacted, encoded as the value was; one that holds `://` and `@` without
    /// being such a URL is hidden whole, and so is a URL nested more than four deep. Parts are
    /// split at `&`, and also read split at `;` (which many servers read as `&`).
    public func redactedQuery(_ query: String) -> String {
        redactedQuery(query, depth: 0, nested: true)
    }

    private func redactedQuery(_ query: String, depth: Int, nested: Bool) -> String {
        query.split(separator: "&", omittingEmptySubsequences: false).map { pair -> String in
            // Many servers read `;` as `&` too: a part is read whole (a `;` inside a nested
            // URL's user must not cut it) and at its `;`s; what either reading hides is hidden.
            let whole = redactedPart(pair, depth: depth, nested: nested)
            guard pair.contains(";") else { return whole }
            let split = pair.split(separator: ";", omittingEmptySubsequences: false).map {
                redactedPart($0, depth: depth, nested: nested)
            }.joined(separator: ";")
            if split == pair { return whole }
            if whole == pair { return split }
            // Each reading hides something the other shows: the value is hidden whole, the
            // name kept when it is a plain one.
            if let equals = pair.firstIndex(of: "="), case let name = pair[..<equals], !name.contains(";"),
                !Self.mayBeURL(String(name).removingPercentEncoding ?? String(name))
            {
                return "\(name)=\(Self.placeholder)"
            }
            return Self.placeholder
        }.joined(separator: "&")
    }

    /// One `name=value` part of a query, redacted.
    private func redactedPart(_ pair: Substring, depth: Int, nested: Bool) -> String {
        // A part that is a URL itself (`?https://u:p@h/`, as some redirectors take it; an
        // `=` in its own query would make the rest read as a value) is one value.
        guard let equals = pair.firstIndex(of: "=") else {
            return nested ? redactedNestedURL(in: String(pair), depth: depth) ?? String(pair) : String(pair)
        }
        let rawName = pair[..<equals]
        let name = String(rawName).removingPercentEncoding ?? String(rawName)
        if nested, Self.mayBeURL(name) { return redactedNestedURL(in: String(pair), depth: depth) ?? String(pair) }
        if isSensitiveQueryParameter(name) { return "\(rawName)=\(Self.placeholder)" }
        let rawValue = String(pair[pair.index(after: equals)...])
        guard nested, let value = redactedNestedURL(in: rawValue, depth: depth) else { return String(pair) }
        return "\(rawName)=\(value)"
    }

    /// `rawValue` (a query value as it came) with the URL it holds redacted, or nil when it
    /// holds none or one with nothing to hide (kept exactly as it came). The value is read as
    /// written and with each layer of its percent-encoding peeled off (whoever reads the
    /// parameter decodes it once; a redirect target passed on twice is encoded twice); when any
    /// reading has something to hide, the deepest reading that is a URL is shown redacted and
    /// encoded again as many times, or, when that one has nothing to hide itself or a deeper
    /// reading can't be taken apart, the value is hidden whole.
    private func redactedNestedURL(in rawValue: String, depth: Int) -> String? {
        var readings = [rawValue]
        while readings.count <= Self.maximumEncodingLayers, let last = readings.last,
            let decoded = last.removingPercentEncoding, decoded != last
        {
            readings.append(decoded)
        }
        let candidates = readings.indices.filter { Self.mayBeURL(readings[$0]) }
        guard !candidates.isEmpty else {
            // Encoded more times than peeled: what it holds is unknown.
            let deepest = readings[readings.count - 1]
            let peelable = deepest.removingPercentEncoding.map { $0 != deepest } ?? false
            return readings.count > Self.maximumEncodingLayers && peelable ? Self.placeholder : nil
        }
        guard depth < Self.maximumNesting else { return Self.placeholder }
        // Each reading that is a URL with a host is checked for what it shows itself; only
        // the deepest is shown, so only its nested URLs are read in turn (one reading per
        // level, not every combination of them).
        func withHost(_ string: String) -> URL? {
            guard let url = URL(string: string), let host = url.host, !host.isEmpty else { return nil }
            return url
        }
        // As written, or as a browser cleans it (`\\h/?token=t` is `//h/?token=t` to it): one
        // read only once cleaned is checked, never shown (hidden whole when it hides something).
        let urls: [(layer: Int, url: URL?, cleaned: Bool)] = candidates.map { layer in
            if let url = withHost(readings[layer]) { return (layer, url, false) }
            return (layer, withHost(Self.browserCleaned(readings[layer])), true)
        }
        let deepestLayer = urls.last { $0.url != nil }?.layer
        var somethingToHide = false
        var deepestURL: (layer: Int, redacted: String, changed: Bool)?
        var deepestOpaque = -1  // the deepest reading with something to hide that can't be shown
        for (layer, url, cleaned) in urls {
            guard let url else {
                if readings[layer].contains("@") {
                    somethingToHide = true
                    deepestOpaque = layer
                }
                continue
            }
            let (redacted, changed) = redactedURLReportingChange(url, depth: depth + 1, nested: layer == deepestLayer)
            somethingToHide = somethingToHide || changed
            if cleaned, changed { deepestOpaque = layer }
            if layer == deepestLayer { deepestURL = (layer, redacted, changed) }
        }
        guard somethingToHide else { return nil }
        guard let shown = deepestURL, shown.changed, shown.layer > deepestOpaque else { return Self.placeholder }
        var encoded = shown.redacted
        for _ in 0..<shown.layer {
            guard let again = encoded.addingPercentEncoding(withAllowedCharacters: Self.unreserved) else { return Self.placeholder }
            encoded = again
        }
        return encoded
    }

    /// Whether `value` may be a URL with an authority: it has a scheme's `://`, starts with
    /// `//` (scheme-relative, `//u:p@h/`), or starts with a scheme browsers read an authority
    /// after even without `//` (`http:/u:p@h/`, `https:\\u:p@h` are `http://u:p@h/` to them,
    /// WHATWG URL; Foundation finds no host there, so one with `@` is hidden whole). It is
    /// read as a browser's URL parser reads it first: leading C0 controls and spaces stripped,
    /// tabs and newlines dropped, `\` taken as `/` (` http:u:p@h`, `\\u:p@h/` are URLs to it).
    private static func mayBeURL(_ rawValue: String) -> Bool {
        let value = browserCleaned(rawValue)
        if value.contains("://") || value.hasPrefix("//") { return true }
        guard let colon = value.utf8.firstIndex(of: UInt8(ascii: ":")) else { return false }
        return specialSchemes.contains(value[..<colon].lowercased())
    }

    /// `value` as a browser's URL parser first cleans it: leading C0 controls and spaces
    /// stripped, tabs and newlines dropped, `\` taken as `/`, and the extra slashes it skips
    /// before a host (`////h/` is `//h/`, `http:///h/` is `http://h/`) dropped. Only a value
    /// holding such a byte, or more than two slashes there, is rebuilt.
    private static func browserCleaned(_ value: String) -> String {
        guard value.utf8.contains(where: { $0 <= 0x20 || $0 == UInt8(ascii: "\\") }) else { return withoutExtraSlashes(value) }
        return withoutExtraSlashes(
            String(
                String.UnicodeScalarView(
                    value.unicodeScalars.drop { $0.value <= 0x20 }.lazy.filter { $0 != "\t" && $0 != "\n" && $0 != "\r" }
                        .map { $0 == "\\" ? "/" : $0 })))
    }

    /// `value` with the slashes after two at its start, or after a special scheme's `:`,
    /// dropped: WHATWG URL skips them before the host (Foundation finds no host there).
    private static func withoutExtraSlashes(_ value: String) -> String {
        let utf8 = value.utf8
        var start = utf8.startIndex
        if let colon = utf8.firstIndex(of: UInt8(ascii: ":")), specialSchemes.contains(value[..<colon].lowercased()) {
            start = utf8.index(after: colon)
        }
        let slashes = utf8[start...].prefix { $0 == UInt8(ascii: "/") }.count
        guard slashes > 2 else { return value }
        return String(value[..<start]) + "//" + String(value[utf8.index(start, offsetBy: slashes)...])
    }

    /// WHATWG URL's special schemes (an authority follows them whatever the slashes).
    private static let specialSchemes: Set<String> = ["http", "https", "ws", "wss", "ftp", "file"]

    /// How many layers of percent-encoding are peeled off a query value to find a URL in it.
    private static let maximumEncodingLayers = 4

    /// RFC 3986's unreserved characters: what an encoded query value keeps as it is.
    private static let unreserved = CharacterSet(
        charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

    /// A message (an error's description) as it may be shown: each space-separated word that
    /// holds a URL (`://`) becomes ``redactedURL(_:)`` of it, or ``placeholder`` when it isn't
    /// one URL with a host as written (`[http://u:p@h/]` parses as a relative path that would
    /// keep the credentials); the rest is kept. Errors such as
    /// ``CourierError/responseBodyTooLarge(url:limit:contentLength:received:)`` name their URL.
    func redactedMessage(_ message: String) -> String {
        guard message.contains("://") else { return message }
        return message.split(separator: " ", omittingEmptySubsequences: false).map { word -> String in
            guard word.contains("://") else { return String(word) }
            guard let url = URL(string: String(word)), url.host != nil else { return Self.placeholder }
            return redactedURL(url)
        }.joined(separator: " ")
    }

    /// Lowercased, with `-` and `.` read as `_`.
    static func normalized(_ name: String) -> String {
        String(name.lowercased().map { $0 == "-" || $0 == "." ? "_" : $0 })
    }
}
