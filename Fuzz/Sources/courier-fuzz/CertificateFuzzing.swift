import Courier
import Foundation

/// Certificate loading from arbitrary DER and PEM: never traps; a loaded certificate's DER
/// loads again to an equal certificate.
enum CertificateFuzzing {
    static func run(_ bytes: [UInt8]) {
        let data = Data(bytes)
        if let certificate = try? Certificate(derEncoded: data) {
            invariant((try? Certificate(derEncoded: certificate.data)) == certificate, "DER round trip")
        }
        let text = String(decoding: bytes, as: UTF8.self)
        _ = try? Certificate(pemEncoded: text)
        _ = try? Certificate.certificates(pemEncoded: text)
    }
}
