@testable import Courier
import Foundation

/// Set-Cookie parsing of arbitrary header values: never traps.
enum SetCookieFuzzing {
    static func run(_ bytes: [UInt8]) {
        _ = SetCookieExpiry.removesCookie(String(decoding: bytes, as: UTF8.self), now: Date(timeIntervalSince1970: 1_700_000_000))
    }
}
