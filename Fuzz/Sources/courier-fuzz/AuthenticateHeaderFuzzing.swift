@testable import Courier
import Foundation

/// `WWW-Authenticate` parsing of arbitrary header values: never traps.
enum AuthenticateHeaderFuzzing {
    static func run(_ bytes: [UInt8]) {
        _ = AuthenticationHeader.parse(String(decoding: bytes, as: UTF8.self))
    }
}
