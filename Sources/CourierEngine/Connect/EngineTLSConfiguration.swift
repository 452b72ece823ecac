public import NIOSSL

/// TLS settings of an ``HTTPEngine``.
///
/// By default the peer's chain is checked against the system trust roots and the host name, as
/// a browser would. A ``ServerTrustVerifier`` replaces that check entirely: it receives the
/// chain (leaf first) and the host and decides; this is where Courier's `SecurityPolicy` plugs in.
public struct EngineTLSConfiguration: Sendable {
    /// Extra trust anchors (DER), trusted alongside the system roots. Default none.
    public var additionalTrustRootsDER: [[UInt8]] = []
    /// Whether the system trust store counts. Default true.
    public var trustsSystemRoots: Bool = true
    /// The lowest TLS version offered. Default TLS 1.2.
    public var minimumTLSVersion: TLSVersion = .tlsv12
    /// A client certificate chain (DER, leaf first) and its private key (DER), for mutual TLS.
    public var clientIdentity: ClientIdentity?
    /// Decides whether a server's certificate chain is trusted. Nil: system roots plus
    /// ``additionalTrustRootsDER`` with a host-name check.
    public var verifier: (any ServerTrustVerifier)?

    /// A client certificate for mutual TLS.
    public struct ClientIdentity: Sendable {
        /// The certificate chain, leaf first, DER.
        public var certificateChainDER: [[UInt8]]
        /// The leaf's private key: PKCS#8 or SEC1 DER.
        public var privateKeyDER: [UInt8]

        /// Creates an identity from DER bytes.
        public init(certificateChainDER: [[UInt8]], privateKeyDER: [UInt8]) {
            self.certificateChainDER = certificateChainDER
            self.privateKeyDER = privateKeyDER
        }
    }

    /// System roots, TLS 1.2 or later, no client certificate, no custom verifier.
    public init() {}
}

/// The answer of a ``ServerTrustVerifier``.
public enum ServerTrustDecision: Sendable, Equatable {
    /// Trust the server and go on with the handshake.
    case trust
    /// Abort the handshake; the request fails with ``EngineError/serverTrustRejected(host:reason:chain:)``.
    case reject(reason: String)
}

/// Judges a server's certificate chain during the TLS handshake.
///
/// Called once per new TLS connection, off the event loop's critical path (the handshake waits
/// for the answer). The chain is as the server sent it, leaf first, DER-encoded; the host is the
/// one the request named (a name or an IP literal).
public protocol ServerTrustVerifier: Sendable {
    /// Decides whether `chain` is acceptable for `host`.
    func verify(chain: [[UInt8]], host: String) async -> ServerTrustDecision
}
