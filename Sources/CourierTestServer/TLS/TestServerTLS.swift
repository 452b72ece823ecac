public import NIOSSL

extension ServerChain {
    /// A NIOSSL server configuration that presents this chain with its private key.
    ///
    /// Without a client CA the server asks for no client certificate. With one, the server
    /// requires a client certificate and verifies its chain against `clientCARootDER` as the only
    /// trust anchor (`certificateVerification = .noHostnameVerification`: a client has no host
    /// name to check). Pass ``TestCertificateAuthority/rootCertificateDER`` to accept
    /// ``TestCertificateAuthority/clientIdentity``.
    ///
    /// - Parameter clientCARootDER: The DER-encoded root that client certificates must chain to,
    ///   or `nil` for no mutual TLS.
    /// - Returns: A configuration for `NIOSSLContext(configuration:)`.
    /// - Throws: `NIOSSLError` if BoringSSL rejects a certificate or the key.
    public func makeServerTLSConfiguration(
        requireClientCertificateSignedBy clientCARootDER: [UInt8]? = nil
    ) throws -> TLSConfiguration {
        let certificates = try certificatesDER.map { try NIOSSLCertificate(bytes: $0, format: .der) }
        let privateKey = try NIOSSLPrivateKey(bytes: privateKeyDER, format: .der)
        var configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: certificates.map { .certificate($0) },
            privateKey: .privateKey(privateKey)
        )
        if let clientCARootDER {
            let clientCA = try NIOSSLCertificate(bytes: clientCARootDER, format: .der)
            configuration.certificateVerification = .noHostnameVerification
            configuration.trustRoots = .certificates([clientCA])
        }
        return configuration
    }
}
