import ArgumentParser
import NIOSSL

/// The test server's certificate authority as the clients trust it: the serve process writes
/// its root as PEM; Courier takes it as DER (beside the system roots, its default), the peers as
/// their only trust root (NIOSSL's `trustRoots = .certificates`). Every client verifies the
/// chain and the host name (`localhost`).
struct ServerTrust: Sendable {
    /// The root CA, DER-encoded.
    let rootDER: [UInt8]
    private let root: NIOSSLCertificate

    /// Reads the root CA from the PEM file at `path`.
    init(pemPath path: String) throws {
        guard let first = try NIOSSLCertificate.fromPEMFile(path).first else {
            throw ValidationError("no certificate in \(path)")
        }
        root = first
        rootDER = try first.toDERBytes()
    }

    /// A NIOSSL client configuration that trusts the root alone, full verification.
    func clientConfiguration() -> TLSConfiguration {
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.trustRoots = .certificates([root])
        return configuration
    }
}
