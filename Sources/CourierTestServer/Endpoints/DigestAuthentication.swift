import Crypto
import Foundation
import Synchronization

/// HTTP Digest access authentication (RFC 7616) as `/digest-auth/...` performs it: the
/// challenge, and the full check of a client's `Authorization: Digest ...` answer.
///
/// Nonces are stateless: a timestamp and an HMAC of it under a per-server secret, so that any
/// nonce this server issued in the last five minutes verifies without bookkeeping, and an
/// older one is answered with `stale=true`. The one piece of state is the set of `nc` values
/// each nonce was already answered with: a repeated `(nonce, nc)` pair is a replay and is
/// rejected (RFC 7616 §3.4; any unused count is accepted, so concurrent clients may interleave).
struct DigestAuthentication: Sendable {
    /// The hash algorithms offered (RFC 7616 §6.1), and their `-sess` variants.
    enum Algorithm: String, Sendable, CaseIterable {
        case md5 = "MD5"
        case sha256 = "SHA-256"
        case sha512 = "SHA-512"

        /// The algorithm named in an httpbin path (`MD5`, `SHA-256`, `SHA-512`); others fall back to MD5.
        init(pathComponent: String?) {
            self = pathComponent.flatMap { name in Self.allCases.first { $0.rawValue.lowercased() == name.lowercased() } } ?? .md5
        }

        /// The lowercase hex digest of `text`.
        func hash(_ text: String) -> String {
            self.hash(Array(text.utf8))
        }

        /// The lowercase hex digest of `bytes`.
        func hash(_ bytes: [UInt8]) -> String {
            switch self {
            case .md5: Insecure.MD5.hash(data: bytes).hexString
            case .sha256: SHA256.hash(data: bytes).hexString
            case .sha512: SHA512.hash(data: bytes).hexString
            }
        }
    }

    /// The protection the server asks for; `nil` means RFC 2069 compatibility (no `qop`).
    enum QualityOfProtection: String, Sendable {
        case auth
        case authInt = "auth-int"
    }

    /// httpbin's realm.
    static let realm = "me@kennethreitz.com"
    /// How long a nonce stays fresh.
    static let nonceLifetime: TimeInterval = 300

    private let secret: SymmetricKey
    /// The `opaque` value this server hands out and expects back.
    let opaque: String
    /// The `nc` values already accepted, per nonce.
    private let usedCounts = NonceCountLedger()

    init() {
        self.secret = SymmetricKey(size: .bits256)
        self.opaque = SHA256.hash(data: Array(UUID().uuidString.utf8)).hexString.prefix(32).description
    }

    /// The `WWW-Authenticate` value for a 401.
    func challenge(qop: QualityOfProtection?, algorithm: Algorithm, stale: Bool = false, now: Date = Date()) -> String {
        var fields = [
            "realm=\"\(Self.realm)\"",
            "nonce=\"\(self.makeNonce(at: now))\"",
        ]
        // Offering both when the path named neither mirrors httpbin.
        fields.append("qop=\"\(qop?.rawValue ?? "auth,auth-int")\"")
        fields.append("opaque=\"\(self.opaque)\"")
        fields.append("algorithm=\(algorithm.rawValue)")
        fields.append("stale=\(stale ? "TRUE" : "FALSE")")
        return "Digest " + fields.joined(separator: ", ")
    }

    /// What the check of an `Authorization` header concluded.
    enum Verdict: Equatable {
        case authenticated
        /// The answer was right but for a nonce that has expired: challenge again with `stale=true`.
        case stale
        case rejected
    }

    /// Checks a client's `Authorization` header against the expected credentials.
    ///
    /// - Parameters:
    ///   - authorization: The header's value (`Digest username="..." ...`).
    ///   - method: The request method.
    ///   - uri: The request target as sent on the request line; the `uri` parameter must equal it.
    ///   - body: The request body, used with `qop=auth-int`.
    ///   - qop: The protection demanded by the path; `nil` accepts `auth`, `auth-int` or none.
    func verify(
        authorization: String,
        method: String,
        uri: String,
        body: [UInt8],
        user: String,
        password: String,
        qop: QualityOfProtection?,
        algorithm: Algorithm,
        now: Date = Date()
    ) -> Verdict {
        guard let parameters = Self.parameters(ofDigestCredentials: authorization),
            parameters["username"] == user,
            parameters["realm"] == Self.realm,
            parameters["uri"] == uri,
            parameters["opaque"] == self.opaque,
            let nonce = parameters["nonce"],
            let response = parameters["response"]?.lowercased()
        else { return .rejected }

        let algorithmName = parameters["algorithm"]?.uppercased() ?? "MD5"
        let sessionVariant: Bool
        if algorithmName == algorithm.rawValue {
            sessionVariant = false
        } else if algorithmName == algorithm.rawValue + "-SESS" {
            sessionVariant = true
        } else {
            return .rejected
        }

        let clientQoP = parameters["qop"].map { $0.lowercased() }
        switch (qop, clientQoP) {
        case (.some(let expected), let given): guard given == expected.rawValue else { return .rejected }
        case (nil, nil), (nil, "auth"), (nil, "auth-int"): break
        default: return .rejected
        }
        let cnonce = parameters["cnonce"]
        let nc = parameters["nc"]
        if clientQoP != nil || sessionVariant {
            guard let cnonce, !cnonce.isEmpty else { return .rejected }
        }
        if clientQoP != nil {
            guard let nc, nc.count == 8, nc.allSatisfy(\.isHexDigit) else { return .rejected }
        }

        var ha1 = algorithm.hash("\(user):\(Self.realm):\(password)")
        if sessionVariant, let cnonce {
            ha1 = algorithm.hash("\(ha1):\(nonce):\(cnonce)")
        }
        let ha2 =
            clientQoP == "auth-int"
            ? algorithm.hash("\(method):\(uri):\(algorithm.hash(body))")
            : algorithm.hash("\(method):\(uri)")
        let expected: String
        if let clientQoP, let nc, let cnonce {
            expected = algorithm.hash("\(ha1):\(nonce):\(nc):\(cnonce):\(clientQoP):\(ha2)")
        } else {
            expected = algorithm.hash("\(ha1):\(nonce):\(ha2)")
        }
        guard Self.constantTimeEqual(expected, response) else { return .rejected }

        switch self.nonceAge(nonce, now: now) {
        case .some(let age) where age <= Self.nonceLifetime:
            if let nc, !self.usedCounts.use(nonce: nonce, count: nc.lowercased()) { return .rejected }
            return .authenticated
        case .some: return .stale
        case nil: return .rejected
        }
    }

    /// The `nc` parameter of an accepted `Authorization` header (for the `X-Digest-Nc` reply header).
    static func nonceCount(ofDigestCredentials value: String) -> String? {
        parameters(ofDigestCredentials: value)?["nc"]
    }

    // MARK: - Nonces

    /// `<16 hex digits of seconds since 1970>` + `<HMAC-SHA256 of them, hex>`.
    func makeNonce(at date: Date) -> String {
        let stamp = String(UInt64(max(0, date.timeIntervalSince1970)), radix: 16)
        let padded = String(repeating: "0", count: max(0, 16 - stamp.count)) + stamp
        return padded + self.signature(padded)
    }

    /// The age of a nonce this server made, or `nil` if it did not make it.
    func nonceAge(_ nonce: String, now: Date) -> TimeInterval? {
        guard nonce.count == 16 + 64 else { return nil }
        let stamp = String(nonce.prefix(16))
        guard Self.constantTimeEqual(String(nonce.dropFirst(16)), self.signature(stamp)),
            let seconds = UInt64(stamp, radix: 16)
        else { return nil }
        return now.timeIntervalSince1970 - TimeInterval(seconds)
    }

    private func signature(_ stamp: String) -> String {
        Data(HMAC<SHA256>.authenticationCode(for: Array(stamp.utf8), using: self.secret)).hexString
    }

    // MARK: - Parsing

    /// The auth-params of a `Digest` credentials value (RFC 7235 §2.1), names lowercased,
    /// quoted strings unescaped; `nil` when the scheme is not Digest or the syntax is broken.
    static func parameters(ofDigestCredentials value: String) -> [String: String]? {
        let trimmed = value.trimmingASCIIWhitespace()
        guard trimmed.lowercased().hasPrefix("digest ") else { return nil }
        var rest = Substring(trimmed.dropFirst("digest ".count))
        var result: [String: String] = [:]
        while true {
            rest = rest.drop { $0 == " " || $0 == "\t" || $0 == "," }
            if rest.isEmpty { return result }
            guard let equals = rest.firstIndex(of: "=") else { return nil }
            let name = rest[..<equals].trimmingASCIIWhitespace().lowercased()
            rest = rest[rest.index(after: equals)...].drop { $0 == " " || $0 == "\t" }
            var parsedValue = ""
            if rest.first == "\"" {
                rest = rest.dropFirst()
                var escaped = false
                var closed = false
                while let character = rest.first {
                    rest = rest.dropFirst()
                    if escaped {
                        parsedValue.append(character)
                        escaped = false
                    } else if character == "\\" {
                        escaped = true
                    } else if character == "\"" {
                        closed = true
                        break
                    } else {
                        parsedValue.append(character)
                    }
                }
                guard closed else { return nil }
            } else {
                let end = rest.firstIndex(of: ",") ?? rest.endIndex
                parsedValue = rest[..<end].trimmingASCIIWhitespace()
                rest = rest[end...]
            }
            guard !name.isEmpty, result[name] == nil else { return nil }
            result[name] = parsedValue
        }
    }

    private static func constantTimeEqual(_ lhs: String, _ rhs: String) -> Bool {
        let left = Array(lhs.utf8)
        let right = Array(rhs.utf8)
        guard left.count == right.count else { return false }
        var difference: UInt8 = 0
        for index in left.indices { difference |= left[index] ^ right[index] }
        return difference == 0
    }
}

/// The `nc` values each nonce was answered with (bounded: the oldest nonces are forgotten).
final class NonceCountLedger: Sendable {
    private struct Entries {
        var counts: [String: Set<String>] = [:]
        var order: [String] = []
    }

    private static let maximumNonces = 4096
    private let entries = Mutex(Entries())

    /// Records `count` for `nonce`; false when that pair was already used (a replay).
    func use(nonce: String, count: String) -> Bool {
        entries.withLock { entries in
            if entries.counts[nonce] == nil {
                entries.order.append(nonce)
                if entries.order.count > Self.maximumNonces {
                    entries.counts[entries.order.removeFirst()] = nil
                }
            }
            return entries.counts[nonce, default: []].insert(count).inserted
        }
    }
}

extension Sequence<UInt8> {
    /// Lowercase hexadecimal, two digits per byte.
    var hexString: String {
        let digits = Array("0123456789abcdef".utf8)
        var result: [UInt8] = []
        for byte in self {
            result.append(digits[Int(byte >> 4)])
            result.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: result, as: UTF8.self)
    }
}
