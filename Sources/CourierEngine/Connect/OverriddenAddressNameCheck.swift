import NIOCore
import NIOSSL

/// The name check a TLS connection whose address an override chose gets on top of NIOSSL's:
/// NIOSSL accepts a certificate whose IP-address entry names the address connected to,
/// whatever the host name, and with a ``ResolveOverride`` or ``ConnectToOverride`` that address
/// is the caller's choice, not the name's. So such a connection must also find the URL's host
/// among the certificate's DNS names (an exact match, or a `*.` wildcard for one leftmost
/// label), as curl checks it. Only without a ``ServerTrustVerifier``: a verifier decides alone.
enum OverriddenAddressNameCheck {
    /// Why the peer's certificate on `channel` doesn't name `host`, or nil when it does (or
    /// lists no subject alternative names, when NIOSSL's check of its common name stands).
    /// On the channel's event loop, after the handshake.
    static func problem(channel: any Channel, host: String) -> String? {
        guard let tls = try? channel.pipeline.syncOperations.handler(type: NIOSSLClientHandler.self),
            let leaf = tls.peerCertificate
        else { return "no peer certificate to check" }
        var dnsNames: [String] = []
        var hasNames = false
        for name in leaf._subjectAlternativeNames() {
            hasNames = true
            guard name.nameType == .dnsName else { continue }
            dnsNames.append(String(decoding: name.contents, as: UTF8.self))
        }
        guard hasNames else { return nil }
        let wanted = host.lowercased().utf8.last == UInt8(ascii: ".") ? String(host.lowercased().dropLast()) : host.lowercased()
        if dnsNames.contains(where: { matches(wanted, pattern: $0.lowercased()) }) { return nil }
        let listed = dnsNames.isEmpty ? "no host name" : dnsNames.joined(separator: ", ")
        return "the certificate names \(listed), not \(host) (an override chose the address, so its IP address entries don't count)"
    }

    /// Whether `host` (lower-cased) matches the certificate name `pattern` (lower-cased).
    static func matches(_ host: String, pattern: String) -> Bool {
        guard pattern.hasPrefix("*.") else { return host == pattern }
        let suffix = pattern.dropFirst(1)  // ".example.com"
        guard host.hasSuffix(suffix), let firstDot = host.firstIndex(of: ".") else { return false }
        // The wildcard stands for exactly the first label, never an empty one.
        return host[firstDot...] == suffix && firstDot != host.startIndex
    }
}
