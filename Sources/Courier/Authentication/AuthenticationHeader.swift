import CourierEngine
import Crypto
import Foundation

/// Parses `WWW-Authenticate` fields (RFC 9110 §11.6.1) and builds the matching `Authorization`
/// value for Basic (RFC 7617) and Digest (RFC 7616: MD5, SHA-256, qop `auth`). Pure functions.
enum AuthenticationHeader {
    /// One challenge: its scheme as the server wrote it, and either auth-params (names
    /// lowercased, quoted strings unescaped) or a token68.
    struct Challenge: Sendable, Equatable {
        var scheme: String
        var parameters: [String: String]
        var token68: String? = nil
    }

    /// Every challenge in every field, in order. A challenge with broken syntax (an
    /// unterminated quoted string, a parameter without `=`, a repeated parameter name) is left
    /// out; the parser then resumes at the next challenge it can recognise.
    ///
    /// ```
    /// WWW-Authenticate = #challenge
    /// challenge  = auth-scheme [ 1*SP ( token68 / #auth-param ) ]
    /// auth-param = token BWS "=" BWS ( token / quoted-string )
    /// token68    = 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"="
    /// ```
    static func challenges(in fields: [String]) -> [Challenge] {
        fields.flatMap { field in
            var scanner = ChallengeScanner(field: field)
            return scanner.all()
        }
    }

    /// The first challenge in `header`, or nil when it holds none.
    static func parse(_ header: String) -> Challenge? {
        challenges(in: [header]).first
    }

    /// The `Basic` credentials for `user` and `password`, or nil when the user contains a
    /// colon (RFC 7617 §2 forbids it: the server would split it wrongly).
    static func basic(user: String, password: String) -> String? {
        guard !user.contains(":") else { return nil }
        return "Basic " + Data("\(user):\(password)".utf8).base64EncodedString()
    }

    /// The `Digest` answer to `challenge`, or nil when it can't be answered: no realm or
    /// nonce, an algorithm other than MD5 or SHA-256, a qop without `auth`, or a user name,
    /// realm, nonce or opaque that can't be a quoted string (a control character other than
    /// HTAB: sent back, a CR or LF would split the `Authorization` line).
    static func digest(
        _ challenge: Challenge,
        user: String,
        password: String,
        method: String,
        uri: String,
        nonceCount: UInt32,
        clientNonce: String
    ) -> String? {
        guard let realm = challenge.parameters["realm"], let nonce = challenge.parameters["nonce"],
            let algorithm = DigestAlgorithm(challenge), !user.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }),
            [realm, nonce, challenge.parameters["opaque"] ?? ""].allSatisfy(canBeQuoted)
        else { return nil }
        let qopOptions = (challenge.parameters["qop"] ?? "").split(separator: ",").map {
            $0.trimmingCharacters(in: .whitespaces).lowercased()
        }
        let ha1 = algorithm.hash("\(user):\(realm):\(password)")
        let ha2 = algorithm.hash("\(method):\(uri)")
        var fields = [
            "username=\(quoted(user))", "realm=\(quoted(realm))", "nonce=\(quoted(nonce))", "uri=\(quoted(uri))",
            "algorithm=\(algorithm.rawValue)",
        ]
        let response: String
        if qopOptions.contains("auth") {
            let nc = hex8(nonceCount)
            response = algorithm.hash("\(ha1):\(nonce):\(nc):\(clientNonce):auth:\(ha2)")
            fields += ["qop=auth", "nc=\(nc)", "cnonce=\(quoted(clientNonce))"]
        } else if challenge.parameters["qop"] == nil {
            response = algorithm.hash("\(ha1):\(nonce):\(ha2)")  // RFC 2069 compatibility
        } else {
            return nil  // auth-int alone would need the body's hash
        }
        fields.append("response=\(quoted(response))")
        if let opaque = challenge.parameters["opaque"] { fields.append("opaque=\(quoted(opaque))") }
        return "Digest " + fields.joined(separator: ", ")
    }

    /// The request target a Digest answer names in `uri`: the URL's percent-encoded path
    /// ("/" when empty) and query, as the request line sends them; "/" without a URL.
    static func requestTarget(of url: URL?) -> String {
        guard let url, let components = URLComponents(url: url, resolvingAgainstBaseURL: true) else { return "/" }
        let path = components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath
        return components.percentEncodedQuery.map { "\(path)?\($0)" } ?? path
    }

    /// A fresh client nonce: 16 random bytes in hex.
    static func makeClientNonce() -> String {
        var generator = SystemRandomNumberGenerator()
        return HexEncoding.lowercase((0..<16).map { _ in UInt8.random(in: .min ... .max, using: &generator) })
    }

    /// Whether `value` fits in a quoted-string (RFC 9110 §5.6.4): no control character but HTAB.
    static func canBeQuoted(_ value: String) -> Bool {
        !value.unicodeScalars.contains { ($0.value < 0x20 && $0 != "\t") || $0.value == 0x7F }
    }

    /// `value` as a quoted-string: `"` and `\` escaped.
    static func quoted(_ value: String) -> String {
        var result = "\""
        for character in value {
            if character == "\"" || character == "\\" { result.append("\\") }
            result.append(character)
        }
        return result + "\""
    }

    /// `1` → `00000001`: eight lowercase hex digits, most significant first.
    static func hex8(_ value: UInt32) -> String {
        withUnsafeBytes(of: value.bigEndian) { HexEncoding.lowercase($0) }
    }
}

/// The Digest hash algorithms Courier answers (the `-sess` variants and SHA-512-256 are not).
enum DigestAlgorithm: String, Sendable {
    case md5 = "MD5"
    case sha256 = "SHA-256"

    /// The challenge's algorithm (MD5 when absent, RFC 7616 §3.3), or nil when unsupported.
    init?(_ challenge: AuthenticationHeader.Challenge) {
        switch (challenge.parameters["algorithm"] ?? "MD5").uppercased() {
        case "MD5": self = .md5
        case "SHA-256": self = .sha256
        default: return nil
        }
    }

    /// Lowercase hex digest of `text` in UTF-8.
    func hash(_ text: String) -> String {
        switch self {
        case .md5: Insecure.MD5.hash(data: Data(text.utf8)).hex
        case .sha256: SHA256.hash(data: Data(text.utf8)).hex
        }
    }
}

/// Reads the challenges of one `WWW-Authenticate` field, byte by byte.
private struct ChallengeScanner {
    private let bytes: [UInt8]
    private var index = 0

    init(field: String) {
        self.bytes = Array(field.utf8)
    }

    private static let space = UInt8(ascii: " ")
    private static let tab = UInt8(ascii: "\t")
    private static let comma = UInt8(ascii: ",")
    private static let equals = UInt8(ascii: "=")
    private static let quote = UInt8(ascii: "\"")
    private static let backslash = UInt8(ascii: "\\")

    /// RFC 9110 §5.6.2 tchar (the engine's check).
    private static func isTokenByte(_ byte: UInt8) -> Bool { HeaderValidation.isTokenByte(byte) }

    /// token68's characters, before its trailing `=`s.
    private static func isToken68Byte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        default:
            return "-._~+/".utf8.contains(byte)
        }
    }

    private var atEnd: Bool { index >= bytes.count }
    private var current: UInt8? { index < bytes.count ? bytes[index] : nil }

    private mutating func skipWhitespace() {
        while let byte = current, byte == Self.space || byte == Self.tab { index += 1 }
    }

    private mutating func skipWhitespaceAndCommas() {
        while let byte = current, byte == Self.space || byte == Self.tab || byte == Self.comma { index += 1 }
    }

    private mutating func token() -> String? {
        let start = index
        while let byte = current, Self.isTokenByte(byte) { index += 1 }
        return index > start ? String(decoding: bytes[start..<index], as: UTF8.self) : nil
    }

    /// After the opening quote; nil when the string never closes.
    private mutating func quotedString() -> String? {
        var value: [UInt8] = []
        while let byte = current {
            index += 1
            if byte == Self.quote { return String(decoding: value, as: UTF8.self) }
            if byte == Self.backslash {
                guard let escaped = current else { return nil }
                index += 1
                value.append(escaped)
            } else {
                value.append(byte)
            }
        }
        return nil
    }

    /// Skips to just after the next comma outside a quoted string (error recovery).
    private mutating func skipElement() {
        while let byte = current {
            index += 1
            if byte == Self.comma { return }
            if byte == Self.quote, quotedString() == nil { return }
        }
    }

    /// A token68 ending the challenge (followed by optional whitespace, then a comma or the end).
    private mutating func token68() -> String? {
        let start = index
        var end = index
        while end < bytes.count, Self.isToken68Byte(bytes[end]) { end += 1 }
        guard end > start else { return nil }
        while end < bytes.count, bytes[end] == Self.equals { end += 1 }
        var after = end
        while after < bytes.count, bytes[after] == Self.space || bytes[after] == Self.tab { after += 1 }
        guard after == bytes.count || bytes[after] == Self.comma else { return nil }
        index = after
        return String(decoding: bytes[start..<end], as: UTF8.self)
    }

    /// Whether the next list element is an auth-param (`name =`), not a new challenge.
    private func nextIsParameter() -> Bool {
        var probe = index
        while probe < bytes.count, Self.isTokenByte(bytes[probe]) { probe += 1 }
        guard probe > index else { return false }
        while probe < bytes.count, bytes[probe] == Self.space || bytes[probe] == Self.tab { probe += 1 }
        return probe < bytes.count && bytes[probe] == Self.equals
    }

    mutating func all() -> [AuthenticationHeader.Challenge] {
        var result: [AuthenticationHeader.Challenge] = []
        while true {
            skipWhitespaceAndCommas()
            if atEnd { return result }
            guard let scheme = token() else {
                skipElement()
                continue
            }
            if let challenge = rest(of: scheme) { result.append(challenge) }
        }
    }

    /// The part of a challenge after its scheme; nil (and skipped) when malformed.
    private mutating func rest(of scheme: String) -> AuthenticationHeader.Challenge? {
        var challenge = AuthenticationHeader.Challenge(scheme: scheme, parameters: [:])
        guard let byte = current, byte == Self.space || byte == Self.tab else {
            if atEnd || current == Self.comma { return challenge }
            skipElement()
            return nil
        }
        skipWhitespace()
        if atEnd || current == Self.comma { return challenge }
        if !nextIsParameter(), let token68 = token68() {
            challenge.token68 = token68
            return challenge
        }
        var malformed = false
        while true {
            if nextIsParameter() {
                guard let name = token()?.lowercased() else { return nil }
                skipWhitespace()
                index += 1  // "="
                skipWhitespace()
                let value: String?
                if current == Self.quote {
                    index += 1
                    value = quotedString()
                    if value == nil { return nil }  // unterminated: nothing after it can be trusted
                } else {
                    value = token()
                }
                if let value, challenge.parameters[name] == nil {
                    challenge.parameters[name] = value
                } else {
                    malformed = true  // a missing value or a repeated name
                }
                skipWhitespace()
                if !atEnd && current != Self.comma {
                    malformed = true
                    skipElement()
                }
            } else if !atEnd && current != Self.comma {
                malformed = true
                skipElement()
            }
            // Between elements: commas, then either another parameter or the next challenge.
            skipWhitespaceAndCommas()
            if atEnd || !nextIsParameter() { return malformed ? nil : challenge }
        }
    }
}
