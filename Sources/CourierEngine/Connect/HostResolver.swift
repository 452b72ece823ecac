/// Turns a host name into the addresses a connection tries: the engine's name lookup, made
/// replaceable (``EngineConfiguration/hostResolver``), as OkHttp's `Dns` is. The default is
/// ``SystemHostResolver`` (`getaddrinfo`).
///
/// The engine asks only for names: an IP literal in a URL is used as it is, a Unix domain
/// socket needs no address, and an entry of ``EngineConfiguration/resolveOverrides`` answers
/// before the resolver is asked. The answer changes where the connection goes, never which
/// name TLS checks: SNI and certificate verification keep the URL's host.
///
/// ```swift
/// struct ClusterResolver: HostResolver {
///     func addresses(of host: String, port: Int) async throws -> [String] {
///         host == "api.internal" ? ["10.0.0.7", "10.0.0.8"] : try await SystemHostResolver().addresses(of: host, port: port)
///     }
/// }
/// ```
public protocol HostResolver: Sendable {
    /// The IP addresses of `host`, as IPv4 or IPv6 literals (`192.0.2.7`, `2001:db8::7`), in
    /// the order to try them; the connection races them (Happy Eyeballs, RFC 8305).
    ///
    /// The connect timeout covers the call: when it runs out first, the request fails with
    /// ``EngineError/timedOut(_:)`` (`.connect`) and the task running this call is cancelled.
    ///
    /// - Parameters:
    ///   - host: The name to resolve (never an IP literal).
    ///   - port: The port the connection goes to, for resolvers that answer per service.
    /// - Returns: At least one address. An empty answer, or one that is not an IP literal,
    ///   fails the request with ``EngineError/dnsFailure(host:reason:)``.
    /// - Throws: Anything: an ``EngineError`` fails the request as it is; any other error as
    ///   ``EngineError/dnsFailure(host:reason:)`` naming it.
    func addresses(of host: String, port: Int) async throws -> [String]
}
