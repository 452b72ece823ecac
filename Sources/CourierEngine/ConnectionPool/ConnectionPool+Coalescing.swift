import NIOCore

/// HTTP/2 connection coalescing (RFC 9113 §9.1.1), by OkHttp's rules: a request to a host with
/// no connection of its own may ride an open HTTP/2 connection opened for another host, when
///
/// - it goes direct (no proxy), over https, to the same port;
/// - its host name resolves (resolve and connect-to rules included) to the address that
///   connection is connected to;
/// - the engine's ``ServerTrustVerifier`` trusts that connection's certificate chain for its
///   host name (so a certificate that doesn't cover it, or a pin that fails, keeps it apart).
///
/// Once a host rode a connection, its next requests go straight to it while it is open and
/// has a free stream. A `421 Misdirected Request` on it sends the request again on a
/// connection of its own and keeps that host apart from then on.
extension ConnectionPool {
    /// Runs `execution` on another host's HTTP/2 connection when the rules allow; returns false
    /// when it must go to a connection of its own. May finish asynchronously (a name lookup and
    /// a trust decision), then queues it for its own connection itself when none fits.
    func coalesce(_ execution: RequestExecution) -> Bool {
        let key = execution.key
        guard key.scheme == .https, key.proxy == nil, key.socketPath == nil, configuration.tls.verifier != nil, execution.mayCoalesce else {
            return false
        }
        enum Next {
            case ownConnection
            case ride(HTTP2Connection)
            case judge([HTTP2Connection])
        }
        let next: Next = state.withLock { state in
            guard !state.misdirected.contains(key), !state.machine.hasConnection(for: key) else { return .ownConnection }
            if let id = state.coalesced[key] {
                if let connection = state.http2Connections[id],
                    state.machine.leaseFreeStream(for: connection.key, where: { $0 == id }) != nil
                {
                    return .ride(connection)
                }
                if state.http2Connections[id] == nil { state.coalesced[key] = nil }
            }
            let candidates = state.http2Connections.values.filter { connection in
                connection.key.host != key.host && connection.key.scheme == .https && connection.key.port == key.port
                    && connection.key.proxy == nil && connection.key.socketPath == nil && connection.info.trustedChainDER != nil
            }
            return candidates.isEmpty ? .ownConnection : .judge(candidates)
        }
        switch next {
        case .ownConnection:
            return false
        case .ride(let connection):
            ride(connection, with: execution)
            return true
        case .judge(let candidates):
            Task { await self.judge(candidates, for: execution) }
            return true
        }
    }

    /// Looks up the request's host and asks the verifier about each candidate at one of its
    /// addresses; the first that passes (with a free stream) carries it, else its own does.
    private func judge(_ candidates: [HTTP2Connection], for execution: RequestExecution) async {
        let key = execution.key
        var deadline = NIODeadline.now() + configuration.connectTimeout
        if let requestDeadline = execution.request.deadline { deadline = min(deadline, requestDeadline) }
        let loop = candidates.first?.eventLoop ?? factory.group.any()
        // Where a connection of its own would go (resolve and connect-to rules included).
        var lookup = ConnectionInfo()
        guard let verifier = configuration.tls.verifier,
            let destination = try? await factory.destination(for: key, deadline: deadline, loop: loop, info: &lookup)
        else {
            submitToOwnConnection(execution)
            return
        }
        let ips = Set(destination.addresses.compactMap(\.ipAddress))
        for connection in candidates {
            guard let ip = connection.info.remoteAddress?.ip, ips.contains(ip), let chain = connection.info.trustedChainDER,
                await verifier.verify(chain: chain, host: key.host) == .trust
            else { continue }
            let leased = state.withLock { state in
                guard !state.machine.hasConnection(for: key),
                    state.machine.leaseFreeStream(for: connection.key, where: { $0 == connection.id }) != nil
                else { return false }
                state.coalesced[key] = connection.id
                return true
            }
            if leased {
                ride(connection, with: execution)
                return
            }
        }
        submitToOwnConnection(execution)
    }

    /// Runs `execution` on a stream of `connection` (already leased for it).
    private func ride(_ connection: HTTP2Connection, with execution: RequestExecution) {
        guard execution.markQueued() else {
            // Cancelled meanwhile: the stream goes back.
            http2StreamEnded(connection)
            return
        }
        execution.markCoalesced(onto: connection.key.host)
        connection.execute(execution)
    }

    /// After a `421 Misdirected Request` on a coalesced connection: the host keeps to
    /// connections of its own.
    func keepApart(_ key: ConnectionKey) {
        state.withLock { state in
            state.coalesced[key] = nil
            state.misdirected.insert(key)
        }
    }
}
