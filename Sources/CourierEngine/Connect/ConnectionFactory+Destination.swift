import Foundation
import NIOCore

/// Where a new connection goes, before any socket is opened: a Unix domain socket, the proxy,
/// or the origin (after the ``ConnectToOverride`` rules), and the addresses of that host from
/// an IP literal, a ``ResolveOverride`` or the configured ``HostResolver``.
extension ConnectionFactory {
    /// The addresses a new connection races, what they stand for, and how they were found.
    struct Destination: Sendable {
        /// The socket addresses to try (one for a Unix domain socket).
        let addresses: [SocketAddress]
        /// The Unix domain socket's path; nil for TCP.
        let socketPath: String?
        /// The host connected to (the origin's, the proxy's, or a connect-to rule's).
        let host: String
        /// The port connected to (0 for a Unix domain socket).
        let port: Int
        /// Whether an override chose the address (nil: the resolver, an IP literal, a socket).
        let addressOverride: EngineMetrics.AddressOverride?

        /// How errors name it: "127.0.0.1:8443 (by a connect-to rule)", the socket path, ….
        var summary: String {
            if let socketPath { return "the Unix domain socket \(socketPath)" }
            switch addressOverride {
            case .connectTo?: return "\(host):\(port) (by a connect-to rule)"
            case .resolve?: return "\(host):\(port) at \(addresses.compactMap(\.ipAddress).joined(separator: ", ")) (by a resolve entry)"
            case nil: return "\(host):\(port)"
            }
        }
    }

    /// Where a connection for `key` goes. Name lookups count against `deadline` (their timer on
    /// `loop`) and are timed in `info` when the resolver is asked.
    func destination(
        for key: ConnectionKey, deadline: NIODeadline, loop: any EventLoop, info: inout ConnectionInfo
    ) async throws(EngineError) -> Destination {
        if let path = key.socketPath {
            let address: SocketAddress
            do {
                address = try SocketAddress(unixDomainSocketPath: path)
            } catch {
                throw .cannotConnect(host: key.host, port: key.port, reason: "the Unix domain socket path \(path) is unusable (\(error))")
            }
            return Destination(addresses: [address], socketPath: path, host: path, port: 0, addressOverride: nil)
        }
        var host = key.host
        var port = key.port
        var rule: EngineMetrics.AddressOverride?
        if let proxy = key.proxy {
            // Through a proxy the socket goes to the proxy; the origin is named in the requests.
            (host, port) = (proxy.host, proxy.port)
        } else if let connectTo = configuration.connectToOverrides.first(where: { $0.matches(host: key.host, port: key.port) }) {
            host = connectTo.connectHost ?? host
            port = connectTo.connectPort ?? port
            rule = .connectTo
        }
        let (addresses, fromResolveEntry) = try await lookUp(host: host, port: port, deadline: deadline, loop: loop, info: &info)
        return Destination(
            addresses: addresses, socketPath: nil, host: host, port: port, addressOverride: rule ?? (fromResolveEntry ? .resolve : nil))
    }

    /// The addresses of `host`: itself when it is an IP literal, else a ``ResolveOverride``'s,
    /// else the resolver's (timed in `info`). `overridden`: a resolve entry answered.
    func lookUp(
        host: String, port: Int, deadline: NIODeadline, loop: any EventLoop, info: inout ConnectionInfo
    ) async throws(EngineError) -> (addresses: [SocketAddress], overridden: Bool) {
        if let literal = try? SocketAddress(ipAddress: host, port: port) {
            return ([literal], false)
        }
        let lowercased = host.lowercased()
        if let entry = configuration.resolveOverrides.first(where: { $0.matches(host: lowercased, port: port) }) {
            return (entry.socketAddresses(port: port), true)
        }
        if let resolveOverride = configuration.resolveOverride {
            return (resolveOverride(host, port), false)
        }
        info.domainLookupStart = Date()
        let addresses: [SocketAddress]
        if configuration.hostResolver is SystemHostResolver {
            addresses = try await SystemHostResolver.resolve(host: host, port: port, deadline: deadline, on: loop)
        } else {
            addresses = try await Self.resolve(host: host, port: port, with: configuration.hostResolver, deadline: deadline, on: loop)
        }
        info.domainLookupEnd = Date()
        return (addresses, false)
    }

    /// Asks a caller's `resolver` for `host`, racing it against `deadline`: when the deadline
    /// comes first the request fails with `timedOut(.connect)` and the resolver's task is
    /// cancelled (a resolver that ignores cancellation finishes unheard).
    static func resolve(
        host: String, port: Int, with resolver: any HostResolver, deadline: NIODeadline, on loop: any EventLoop
    ) async throws(EngineError) -> [SocketAddress] {
        guard NIODeadline.now() < deadline else { throw .timedOut(.connect) }
        // The first of the answer and the deadline settles the promise (NIO ignores a second).
        let promise = loop.makePromise(of: [String].self)
        let lookup = Task {
            do {
                promise.succeed(try await resolver.addresses(of: host, port: port))
            } catch {
                promise.fail(error)
            }
        }
        let timer = loop.scheduleTask(deadline: deadline) {
            promise.fail(EngineError.timedOut(.connect))
            lookup.cancel()
        }
        defer { timer.cancel() }
        let answer: [String]
        do {
            answer = try await promise.futureResult.get()
        } catch let error as EngineError {
            throw error
        } catch {
            throw .dnsFailure(host: host, reason: "the resolver failed: \(error)")
        }
        var addresses: [SocketAddress] = []
        for text in answer {
            guard let address = try? SocketAddress(ipAddress: text, port: port) else {
                throw .dnsFailure(host: host, reason: "the resolver answered '\(text)', which is not an IP address")
            }
            addresses.append(address)
        }
        return addresses
    }
}
