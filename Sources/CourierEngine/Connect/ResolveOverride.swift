import NIOCore

/// Addresses given for a host and port, used instead of asking the resolver: curl's
/// `--resolve HOST:PORT:ADDRESS[,ADDRESS]...` (``EngineConfiguration/resolveOverrides``).
///
/// Only where the connection goes changes: the `Host` header, SNI and certificate
/// verification keep the URL's host, so `https://example.test:8443/` with
/// `example.test:8443:127.0.0.1` reaches a local server that must prove it is
/// `example.test`. The request's metrics say so (``EngineMetrics/addressOverride``).
/// The certificate must name that host among its DNS names: an IP-address entry for the
/// address connected to doesn't do (NIOSSL's own check would take it; the engine adds the name
/// check for connections an override placed, as curl checks them).
public struct ResolveOverride: Sendable, Hashable, CustomStringConvertible {
    /// The host name it answers for, lower-cased (host names match case-insensitively).
    public let host: String
    /// The port it answers for: a request to another port of the host asks the resolver.
    public let port: Int
    /// The IP literals to connect to, in the order to try them (raced, as the resolver's
    /// answer would be).
    public let addresses: [String]

    /// The form ``init(parsing:)`` reads.
    static let form = "HOST:PORT:ADDRESS[,ADDRESS]..."

    /// Addresses for `host` and `port`.
    /// - Throws: ``HostOverrideError`` for an empty or malformed host, a port outside 1–65535,
    ///   no address, or an address that is not an IPv4 or IPv6 literal (no names: they would
    ///   need the resolver this replaces).
    public init(host: String, port: Int, addresses: [String]) throws(HostOverrideError) {
        let input = "\(host):\(port):\(addresses.joined(separator: ","))"
        func failure(_ reason: String) -> HostOverrideError {
            HostOverrideError(input: input, reason: reason, expectedForm: Self.form)
        }
        if let problem = HostOverrideSyntax.problem(withHost: host) { throw failure(problem) }
        guard (1...65535).contains(port) else { throw failure("the port \(port) is not from 1 to 65535") }
        guard !addresses.isEmpty else { throw failure("no address is given") }
        for address in addresses where IPAddressBytes(address) == nil {
            throw failure(address.isEmpty ? "an address is empty" : "'\(address)' is not an IPv4 or IPv6 address")
        }
        self.host = host.lowercased()
        self.port = port
        self.addresses = addresses
    }

    /// Reads curl's `--resolve` syntax: `HOST:PORT:ADDRESS[,ADDRESS]...`, an IPv6 address
    /// written bare or in brackets (`example.test:443:[::1],127.0.0.1`).
    /// - Throws: ``HostOverrideError`` naming what is missing or malformed.
    public init(parsing text: String) throws(HostOverrideError) {
        func failure(_ reason: String) -> HostOverrideError {
            HostOverrideError(input: text, reason: reason, expectedForm: Self.form)
        }
        // HOST and PORT are the first two fields; the rest (which may hold IPv6 colons) is the list.
        guard let firstColon = text.firstIndex(of: ":") else { throw failure("it has no ':' between host and port") }
        let afterHost = text[text.index(after: firstColon)...]
        guard let secondColon = afterHost.firstIndex(of: ":") else {
            throw failure("it has no ':' between port and addresses")
        }
        let host = String(text[..<firstColon])
        let portText = afterHost[..<secondColon]
        guard let port = HostOverrideSyntax.port(portText) else { throw failure(HostOverrideSyntax.portProblem(portText)) }
        let list = afterHost[afterHost.index(after: secondColon)...]
        guard !list.isEmpty else { throw failure("no address is given") }
        let addresses = list.split(separator: ",", omittingEmptySubsequences: false).map { field in
            HostOverrideSyntax.unbracketed(field.drop { $0 == " " })
        }
        do throws(HostOverrideError) {
            try self.init(host: host, port: port, addresses: addresses)
        } catch {
            throw failure(error.reason)
        }
    }

    /// `HOST:PORT:ADDRESS[,ADDRESS]...`, IPv6 addresses in brackets (what curl reads).
    public var description: String {
        "\(host):\(port):" + addresses.map { $0.contains(":") ? "[\($0)]" : $0 }.joined(separator: ",")
    }

    /// Whether it answers for `host` (lower-cased) and `port`.
    func matches(host: String, port: Int) -> Bool {
        self.port == port && self.host == host
    }

    /// Its addresses as socket addresses for `port` (each was checked when it was made).
    func socketAddresses(port: Int) -> [SocketAddress] {
        addresses.compactMap { try? SocketAddress(ipAddress: $0, port: port) }
    }
}
