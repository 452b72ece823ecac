import Foundation

/// How a client reaches nginx over TLS in `courier-bench https`: the CA that issued nginx's
/// certificate (PEM path and DER bytes) and whether HTTP/2 may be negotiated.
struct BenchTLS: Sendable {
    /// The PEM file of the CA (AsyncHTTPClient reads it by path).
    var caPath: String
    /// The same CA, DER-encoded (Courier's engine and session take bytes).
    var caDER: [UInt8]
    /// true: offer h2 and http/1.1 by ALPN; false: HTTP/1.1 only.
    var allowsHTTP2: Bool
}
