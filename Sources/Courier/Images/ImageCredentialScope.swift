import Crypto
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Whose image a request asks for, as the image cache key and ``ImageDownloader``'s merging see
/// it: the request's credential header fields, `Authorization`, `Cookie` and
/// `Proxy-Authorization`, and the common per-user token fields `X-Api-Key`, `X-Auth-Token`,
/// `X-Amz-Security-Token` (not AFN: its key is the URL alone, so one downloader shared by
/// several users, as in a server process, hands one user's image to the next).
///
/// A request without any of them keeps AFN's key exactly (the suffix is empty). A request with
/// any gets a suffix naming the SHA-256 of their values, never the values (a custom
/// ``ImageCache`` may log or store its identifiers): two requests share an image only when they
/// carry the same values in the same fields. Pure; no I/O.
enum ImageCredentialScope {
    /// The request header fields that name a user, in the order they are digested:
    /// ``CredentialHeaders/requestFields``, then ``CredentialHeaders/tokenFields``.
    static let fieldNames = CredentialHeaders.requestFields + CredentialHeaders.tokenFields

    /// How many of ``fieldNames`` are always framed: the first three, the scope's fields before
    /// the token fields joined it. The token fields are framed only when one is present, so a
    /// request carrying none keeps the key it had before them.
    static let alwaysFramedCount = CredentialHeaders.requestFields.count

    /// What the suffix starts with. It begins with a space, which a URL's absolute string never
    /// holds, so a suffixed key cannot be read as a plain key of another URL.
    static let suffixPrefix = " credentials-sha256="

    /// The key suffix for credential fields holding `values` (in ``fieldNames`` order; nil for a
    /// field the request does not carry; missing trailing entries count as nil): empty when
    /// every one is nil, else ``suffixPrefix`` and the SHA-256, in hex, of each field's presence
    /// and value, length-framed so that no two different lists digest the same bytes. The
    /// fields past ``alwaysFramedCount`` are framed only when one of them is present (each
    /// entry frames itself, so the first ``alwaysFramedCount`` entries end where they end and
    /// the lists still digest apart).
    static func keySuffix(values: [String?]) -> String {
        guard values.contains(where: { $0 != nil }) else { return "" }
        let framedCount =
            values.dropFirst(alwaysFramedCount).contains(where: { $0 != nil })
            ? max(values.count, fieldNames.count) : alwaysFramedCount
        var framed: [UInt8] = []
        for index in 0..<framedCount {
            guard index < values.count, let value = values[index] else {
                framed.append(UInt8(ascii: "-"))
                continue
            }
            let bytes = Array(value.utf8)
            framed.append(UInt8(ascii: "+"))
            framed.append(contentsOf: "\(bytes.count):".utf8)
            framed.append(contentsOf: bytes)
        }
        return suffixPrefix + SHA256.hash(data: framed).hex
    }

    /// The key suffix for `request`'s own credential fields (names matched case-insensitively).
    /// Fields a session adds when it sends (its cookie jar, its additional headers) belong to the
    /// session, shared by all its users, and do not count.
    static func keySuffix(for request: URLRequest) -> String {
        keySuffix(values: fieldNames.map { request.value(forHTTPHeaderField: $0) })
    }
}
