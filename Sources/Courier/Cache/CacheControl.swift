import Foundation

/// The directives of `Cache-Control` fields (RFC 9111 §5.2), request or response, parsed
/// leniently: names are case-insensitive, values may be quoted, unknown directives are kept,
/// the first occurrence of a repeated directive wins, and a malformed delta-seconds value is
/// treated as the most conservative reading (§4.2.1: `max-age=abc` is stale at once).
///
/// Pure value; no I/O.
struct CacheControl: Sendable, Equatable {
    /// Directive name (lowercased) to its value (unquoted), or nil when it has none.
    private(set) var directives: [String: String?] = [:]

    /// Parses every `Cache-Control` field value (they combine as one comma-separated list).
    init(_ fieldValues: [String]) {
        for value in fieldValues {
            for item in Self.splitList(value) {
                let trimmed = item.trimmingCharacters(in: .whitespaces)
                guard !trimmed.isEmpty else { continue }
                let name: String
                var argument: String?
                if let equals = trimmed.firstIndex(of: "=") {
                    name = trimmed[..<equals].trimmingCharacters(in: .whitespaces).lowercased()
                    var raw = trimmed[trimmed.index(after: equals)...].trimmingCharacters(in: .whitespaces)
                    if raw.count >= 2, raw.hasPrefix("\""), raw.hasSuffix("\"") {
                        raw = String(raw.dropFirst().dropLast()).replacingOccurrences(of: "\\\"", with: "\"")
                    }
                    argument = raw
                } else {
                    name = trimmed.lowercased()
                }
                guard !name.isEmpty, directives[name] == nil else { continue }
                directives[name] = .some(argument)
            }
        }
    }

    /// Whether `name` is present (with or without a value).
    func has(_ name: String) -> Bool { directives[name] != nil }

    /// A delta-seconds directive: nil when absent; 0 when present but malformed or negative
    /// (the conservative reading); capped at 2^31 seconds as §1.2.2 allows.
    func seconds(_ name: String) -> Int? {
        guard let entry = directives[name] else { return nil }
        return entry.flatMap(Self.deltaSeconds) ?? 0
    }

    /// A delta-seconds value (`1*DIGIT`, RFC 9111 §1.2.2): nil when `text` is empty or holds
    /// anything but ASCII digits; leading zeros don't count (`00000000060` is 60); capped at
    /// ``deltaSecondsCap``. Shared by the directives and the `Age` field.
    static func deltaSeconds(_ text: some StringProtocol) -> Int? {
        guard !text.isEmpty, text.allSatisfy(\.isASCIIDigit) else { return nil }
        let significant = text.drop { $0 == "0" }
        guard significant.count <= 10, let value = Int(significant.isEmpty ? "0" : String(significant)) else {
            return deltaSecondsCap
        }
        return min(value, deltaSecondsCap)
    }

    /// The largest delta-seconds value kept (RFC 9111 §1.2.2).
    static let deltaSecondsCap = 2_147_483_648

    var noStore: Bool { has("no-store") }
    /// `no-cache`, with or without field names (a private cache treats both as unqualified).
    var noCache: Bool { has("no-cache") }
    var isPrivate: Bool { has("private") }
    var isPublic: Bool { has("public") }
    var mustRevalidate: Bool { has("must-revalidate") }
    var maxAge: Int? { seconds("max-age") }
    var onlyIfCached: Bool { has("only-if-cached") }
    var minFresh: Int? { seconds("min-fresh") }
    /// `max-stale`: `.some(nil)` when present without a value (any staleness accepted).
    var maxStale: Int?? {
        guard let entry = directives["max-stale"] else { return nil }
        guard entry != nil else { return .some(nil) }
        return .some(seconds("max-stale"))
    }

    /// Splits a list on commas outside quoted strings.
    private static func splitList(_ value: String) -> [Substring] {
        QuotedListSplitter.split(value, at: ",")
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}
