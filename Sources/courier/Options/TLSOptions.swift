import Courier
import Foundation

/// `--verify no|PATH`, `--pin-cert PATH` and `--pin-mode`: extra trust roots for the session's
/// TLS configuration, and a `SecurityPolicy` (pinning, or no checks at all) for the manager.
struct TLSOptions {
    /// Certificates to trust in addition to the system store (`--verify PATH`).
    var extraRoots: [Certificate] = []
    /// `--verify no`: accept any certificate for any host.
    var acceptsAnyCertificate = false
    /// `--pin-cert`: the certificates one of which must be in the server's chain.
    var pinned: [Certificate] = []
    /// `--pin-mode`.
    var pinningMode: SSLPinningMode = .certificate

    /// Reads the certificate files named by the options.
    /// - Throws: ``RequestBuildError`` naming the file and what is wrong with it.
    init(verify: String?, pinnedCertificatePath: String?, pinMode: String) throws {
        switch verify?.lowercased() {
        case nil, "yes", "true": break
        case "no", "false": acceptsAnyCertificate = true
        default:
            if let verify { extraRoots = try Self.load(verify, option: "--verify") }
        }
        switch pinMode {
        case "certificate": pinningMode = .certificate
        case "public-key": pinningMode = .publicKey
        default: throw RequestBuildError(description: "--pin-mode takes certificate or public-key; got '\(pinMode)'")
        }
        if let pinnedCertificatePath { pinned = try Self.load(pinnedCertificatePath, option: "--pin-cert") }
    }

    /// Adds the extra roots to the engine's trust store.
    func apply(to configuration: inout SessionConfiguration) {
        configuration.tls.additionalTrustRootsDER += extraRoots.map(\.derBytes)
    }

    /// The policy the options ask for, or nil for the default (the engine's own checks).
    var securityPolicy: SecurityPolicy? {
        guard acceptsAnyCertificate || !pinned.isEmpty else { return nil }
        var policy = SecurityPolicy(pinningMode: pinned.isEmpty ? .none : pinningMode, pinnedCertificates: Set(pinned))
        // trustedRootCertificates stays nil: the session's trust store (the system's plus the
        // configuration's extra roots from --verify PATH).
        if acceptsAnyCertificate {
            policy.allowInvalidCertificates = true
            policy.validatesDomainName = !pinned.isEmpty
        }
        return policy
    }

    /// Sets the policy on the manager when the options ask for one.
    /// - Throws: the manager's refusal of the policy, as a ``RequestBuildError``.
    func apply(to manager: URLSessionManager) throws {
        guard let policy = securityPolicy else { return }
        do {
            try manager.setSecurityPolicy(policy)
        } catch {
            throw RequestBuildError(description: "the TLS options can't be combined: \(error)")
        }
    }

    private static func load(_ path: String, option: String) throws -> [Certificate] {
        do {
            return try Certificate.certificates(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw RequestBuildError(description: "\(option) \(path): \(error)")
        }
    }
}
