@testable import Courier
import Foundation

/// `Set-Cookie` fields from arbitrary bytes (split on newlines into several fields), parsed and
/// stored in a jar for one of a few URLs: never traps, and what the jar then hands out obeys
/// the storage rules whatever the server sent: no cookie for a public suffix or a foreign
/// domain, no `Secure` cookie over http, and a `Cookie` header that is one line.
enum SetCookieFuzzing {
    private static let urls = [
        "http://www.example.co.uk/a/b", "https://example.com/", "http://127.0.0.1:8080/x", "https://a.b.ck/p",
    ].compactMap(URL.init(string:))
    private static let now = Date(timeIntervalSince1970: 1_700_000_000)

    static func run(_ bytes: [UInt8]) {
        guard let selector = bytes.first else { return }
        let fields = String(decoding: bytes.dropFirst(), as: UTF8.self).split(separator: "\n").map(String.init)
        for field in fields { _ = SetCookieParser.parse(field) }
        let url = urls[Int(selector) % urls.count]
        let jar = HTTPCookieJar(clock: { now })
        jar.storeCookies(fromSetCookieFields: fields, for: url)
        guard let host = url.host else { return }
        for cookie in jar.allCookies {
            invariant(host == cookie.domain || host.hasSuffix("." + cookie.domain), "cookie for \(cookie.domain) stored from \(host)")
            invariant(PublicSuffixList.shipped.publicSuffix(of: cookie.domain) != cookie.domain || cookie.domain == host,
                      "cookie stored for the public suffix \(cookie.domain)")
        }
        for target in urls {
            if let header = jar.cookieHeader(for: target) {
                invariant(!header.contains(where: { $0 == "\r" || $0 == "\n" }), "Cookie header with a line break: \(header.debugDescription)")
            }
            if target.scheme == "http" {
                invariant(jar.cookies(for: target).allSatisfy { !$0.isSecure }, "a Secure cookie offered to \(target)")
            }
        }
    }
}
