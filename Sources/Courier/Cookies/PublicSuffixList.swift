public import Foundation

/// Mozilla's Public Suffix List (https://publicsuffix.org/): the domains under which anyone can
/// register a name (`com`, `co.uk`, `github.io`), where a cookie's `Domain` must never point.
///
/// ``shipped`` is the copy Courier carries (generated from Debian's `publicsuffix` package by
/// `scripts/update-public-suffix-list.sh`; the list is MPL-2.0, its header is kept in
/// `PublicSuffixListData.swift`). Load a newer copy at run time with ``init(contentsOf:)`` or
/// ``init(text:)`` and hand it to ``HTTPCookieJar/init(publicSuffixList:limits:clock:)``.
///
/// The ICANN and private sections are both used, as browsers do for cookies. Wildcard
/// (`*.ck`) and exception (`!www.ck`) rules follow the list's algorithm, with the implicit
/// `*` rule (an unlisted top-level domain is a public suffix).
///
/// Host names are compared in lowercase ASCII: rules with Unicode labels are converted to
/// Punycode (`xn--…`) when the list is parsed, and so are hosts that reach it with Unicode
/// labels. No further IDNA mapping (UTS #46) is applied: a host is compared as given.
///
/// A value type, immutable once made; safe to share across threads.
public struct PublicSuffixList: Sendable {
    private var rules: Set<String> = []
    /// `*.ck` is kept as `ck`.
    private var wildcardParents: Set<String> = []
    /// `!www.ck` is kept as `www.ck`.
    private var exceptions: Set<String> = []

    /// Why a list could not be loaded.
    public struct LoadError: Error, Sendable, Equatable, CustomStringConvertible {
        /// What was wrong, e.g. `no rule found`.
        public let reason: String
        /// `invalid public suffix list: <reason>`.
        public var description: String { "invalid public suffix list: \(reason)" }
    }

    /// The number of rules read (normal, wildcard and exception).
    public var ruleCount: Int { rules.count + wildcardParents.count + exceptions.count }

    /// Parses the list's text format: one rule a line, `//` comments and blank lines skipped,
    /// a rule ending at the first whitespace. Lines that aren't valid rules are skipped.
    /// - Throws: ``PublicSuffixList/LoadError`` when the text holds no rule at all (almost
    ///   surely not a suffix list).
    public init(text: String) throws {
        for line in text.split(whereSeparator: \.isNewline) {
            guard let rule = line.split(whereSeparator: \.isWhitespace).first, !rule.hasPrefix("//") else { continue }
            var body = Substring(rule.lowercased())
            var isException = false
            if body.hasPrefix("!") {
                isException = true
                body = body.dropFirst()
            }
            var isWildcard = false
            if body.hasPrefix("*.") {
                isWildcard = true
                body = body.dropFirst(2)
            }
            guard !body.isEmpty, !body.contains("*"), !body.contains("!"),
                let ascii = Punycode.asciiHost(String(body))
            else { continue }
            if isException {
                exceptions.insert(ascii)
            } else if isWildcard {
                wildcardParents.insert(ascii)
            } else {
                rules.insert(ascii)
            }
        }
        guard ruleCount > 0 else {
            throw LoadError(reason: "no rule found")
        }
    }

    /// Reads a list in the text format from a file (for instance a fresh download of
    /// https://publicsuffix.org/list/public_suffix_list.dat, or
    /// `/usr/share/publicsuffix/public_suffix_list.dat` on Debian). Reads synchronously.
    /// - Throws: ``PublicSuffixList/LoadError`` when the file can't be read as UTF-8 or holds
    ///   no rule.
    public init(contentsOf url: URL) throws {
        let text: String
        do {
            text = try String(contentsOf: url, encoding: .utf8)
        } catch {
            throw LoadError(reason: "cannot read \(url.path): \(error.localizedDescription)")
        }
        try self.init(text: text)
    }

    /// The copy shipped with Courier, parsed on first use.
    public static let shipped: PublicSuffixList = {
        do {
            return try PublicSuffixList(text: shippedText)
        } catch {
            preconditionFailure("the shipped public suffix list does not parse: \(error)")
        }
    }()

    /// The public suffix of `host` (`www.example.co.uk` → `co.uk`, `a.b.ck` → `b.ck`,
    /// `www.ck` → `ck`, `example.unlisted` → `unlisted`). `host` is lowercased; a trailing dot
    /// is ignored. Nil for an empty host or one with an empty label.
    public func publicSuffix(of host: String) -> String? {
        guard let labels = Self.labels(of: host) else { return nil }
        let count = suffixLabelCount(labels)
        return labels.suffix(count).joined(separator: ".")
    }

    /// Whether `host` is itself a public suffix (`com`, `co.uk`, `anything.ck`), as the cookie
    /// rules ask of a `Domain` attribute.
    public func isPublicSuffix(_ host: String) -> Bool {
        guard let labels = Self.labels(of: host) else { return false }
        return suffixLabelCount(labels) == labels.count
    }

    /// The registrable domain (the public suffix plus one label: `www.example.co.uk` →
    /// `example.co.uk`), or nil when `host` is a public suffix itself.
    public func registrableDomain(of host: String) -> String? {
        guard let labels = Self.labels(of: host) else { return nil }
        let count = suffixLabelCount(labels)
        guard count < labels.count else { return nil }
        return labels.suffix(count + 1).joined(separator: ".")
    }

    private static func labels(of host: String) -> [Substring]? {
        var host = host.lowercased()
        if host.hasSuffix(".") { host.removeLast() }
        guard let ascii = Punycode.asciiHost(host), !ascii.isEmpty else { return nil }
        let labels = ascii.split(separator: ".", omittingEmptySubsequences: false)
        guard !labels.contains(where: \.isEmpty) else { return nil }
        return labels
    }

    /// How many trailing labels form the public suffix: an exception rule wins and yields its
    /// parent (never less than one label); otherwise the longest matching rule; otherwise one
    /// (the implicit `*`).
    private func suffixLabelCount(_ labels: [Substring]) -> Int {
        var longest = 1
        for count in 1...labels.count {
            let candidate = labels.suffix(count).joined(separator: ".")
            if exceptions.contains(candidate) { return max(1, count - 1) }  // `!com` alone would leave no suffix
            if rules.contains(candidate) { longest = count }
            if count >= 2, wildcardParents.contains(labels.suffix(count - 1).joined(separator: ".")) { longest = count }
        }
        return longest
    }
}
