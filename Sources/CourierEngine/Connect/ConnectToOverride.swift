/// Sends connections for one host and port to another host and port: curl's `--connect-to
/// HOST1:PORT1:HOST2:PORT2` (``EngineConfiguration/connectToOverrides``).
///
/// Only where the connection goes changes: the `Host` header, SNI and certificate
/// verification keep the URL's host and port, so a request to `https://example.test/` sent to
/// `127.0.0.1:8443` still checks that the server is `example.test`. The new host is resolved
/// as any other (a ``ResolveOverride`` for it applies). Not applied when the request goes
/// through a proxy: the proxy connects to the URL's host. The request's metrics say which
/// address was used and that a rule sent it there (``EngineMetrics/addressOverride``). As for
/// a ``ResolveOverride``, the certificate must name the URL's host among its DNS names.
public struct ConnectToOverride: Sendable, Hashable, CustomStringConvertible {
    /// The host it applies to, lower-cased; nil for every host.
    public let host: String?
    /// The port it applies to; nil for every port.
    public let port: Int?
    /// Where connections go instead; nil keeps the request's host.
    public let connectHost: String?
    /// The port connections go to instead; nil keeps the request's port.
    public let connectPort: Int?

    /// The form ``init(parsing:)`` reads.
    static let form = "HOST1:PORT1:HOST2:PORT2 (any of them may be empty)"

    /// A rule sending connections for `host`:`port` (nil: any) to `connectHost`:`connectPort`
    /// (nil: the request's own).
    /// - Throws: ``HostOverrideError`` for a malformed host or a port outside 1–65535.
    public init(host: String?, port: Int?, connectHost: String?, connectPort: Int?) throws(HostOverrideError) {
        let input = [host ?? "", port.map(String.init) ?? "", connectHost ?? "", connectPort.map(String.init) ?? ""]
            .joined(separator: ":")
        func failure(_ reason: String) -> HostOverrideError {
            HostOverrideError(input: input, reason: reason, expectedForm: Self.form)
        }
        for name in [host, connectHost].compactMap({ $0 }) {
            if let problem = HostOverrideSyntax.problem(withHost: name) { throw failure(problem) }
        }
        for number in [port, connectPort].compactMap({ $0 }) where !(1...65535).contains(number) {
            throw failure("the port \(number) is not from 1 to 65535")
        }
        self.host = host?.lowercased()
        self.port = port
        self.connectHost = connectHost
        self.connectPort = connectPort
    }

    /// Reads curl's `--connect-to` syntax: `HOST1:PORT1:HOST2:PORT2`, IPv6 literals in
    /// brackets (`example.test:443:[::1]:8443`). An empty HOST1 or PORT1 matches any; an empty
    /// HOST2 or PORT2 keeps the request's.
    /// - Throws: ``HostOverrideError`` naming what is missing or malformed.
    public init(parsing text: String) throws(HostOverrideError) {
        func failure(_ reason: String) -> HostOverrideError {
            HostOverrideError(input: text, reason: reason, expectedForm: Self.form)
        }
        guard let fields = HostOverrideSyntax.fields(text) else { throw failure("a '[' or ']' is unmatched") }
        guard fields.count == 4 else {
            throw failure("it has \(fields.count) field\(fields.count == 1 ? "" : "s") separated by ':', not 4")
        }
        func parsedPort(_ field: Substring) throws(HostOverrideError) -> Int? {
            guard !field.isEmpty else { return nil }
            guard let port = HostOverrideSyntax.port(field) else { throw failure(HostOverrideSyntax.portProblem(field)) }
            return port
        }
        let host = fields[0].isEmpty ? nil : HostOverrideSyntax.unbracketed(fields[0])
        let connectHost = fields[2].isEmpty ? nil : HostOverrideSyntax.unbracketed(fields[2])
        let sourcePort = try parsedPort(fields[1])
        let targetPort = try parsedPort(fields[3])
        do throws(HostOverrideError) {
            try self.init(host: host, port: sourcePort, connectHost: connectHost, connectPort: targetPort)
        } catch {
            throw failure(error.reason)
        }
    }

    /// `HOST1:PORT1:HOST2:PORT2` (what curl reads), empty where nil.
    public var description: String {
        func shown(_ host: String?) -> String { host.map { $0.contains(":") ? "[\($0)]" : $0 } ?? "" }
        return "\(shown(host)):\(port.map(String.init) ?? ""):\(shown(connectHost)):\(connectPort.map(String.init) ?? "")"
    }

    /// Whether it applies to `host` (lower-cased) and `port`.
    func matches(host: String, port: Int) -> Bool {
        (self.host == nil || self.host == host) && (self.port == nil || self.port == port)
    }
}
