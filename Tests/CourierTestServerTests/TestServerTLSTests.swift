import CourierTestServer
import Foundation
import NIOCore
import NIOPosix
import NIOSSL
import Testing

extension TestCertificateAuthorityTests {
    /// Real TLS handshakes over loopback: a NIO server using `makeServerTLSConfiguration`, and a
    /// NIO client that trusts only the generated root. Nested in `TestCertificateAuthorityTests`
    /// so that `swift test --filter TestCertificateAuthorityTests` runs them too.
    @Suite struct Handshakes {
        /// Generated at the real current time: BoringSSL checks validity against the clock.
        let authority: TestCertificateAuthority

        init() throws {
            authority = try TestCertificateAuthority.generate()
        }

        @Test func validChainHandshakesForLocalhost() async throws {
            let outcome = try await handshake(presenting: .valid, serverHostname: "localhost")
            try outcome.requireSuccess()
        }

        @Test(arguments: ["127.0.0.1", "::1"])
        func validChainHandshakesForLoopbackAddresses(host: String) async throws {
            // No SNI for IP literals: NIOSSL checks the peer's address against the IP SANs.
            let outcome = try await handshake(presenting: .valid, serverHostname: nil, host: host)
            try outcome.requireSuccess()
        }

        /// Each invalid chain fails for its own reason: the client's error, and for chain errors
        /// the alert the client sent to the server.
        @Test(arguments: [
            (ServerChainKind.wrongHost, "failedToValidateHostname", "closed before application data"),
            (.expired, "CERTIFICATE_VERIFY_FAILED", "CERTIFICATE_EXPIRED"),
            (.notYetValid, "CERTIFICATE_VERIFY_FAILED", "CERTIFICATE_EXPIRED"),  // BoringSSL's alert for both
            (.selfSigned, "CERTIFICATE_VERIFY_FAILED", "UNKNOWN_CA"),
        ])
        func invalidChainFailsTheHandshake(kind: ServerChainKind, clientError: String, serverError: String) async throws {
            let outcome = try await handshake(presenting: kind, serverHostname: "localhost")
            #expect(outcome.client.contains(clientError), "the client accepted the \(kind) chain or failed otherwise")
            #expect(outcome.server.contains(serverError))
        }

        @Test func wrongHostChainIsAcceptedForItsOwnName() async throws {
            // Proves the wrongHost failure above is the host name, not the chain.
            let outcome = try await handshake(presenting: .wrongHost, serverHostname: "wrong.host.example")
            try outcome.requireSuccess()
        }

        @Test func chainOfAnotherAuthorityFailsTheHandshake() async throws {
            let other = try TestCertificateAuthority.generate()
            let outcome = try await handshake(
                presenting: other.serverChain(.valid),
                trusting: authority.rootCertificateDER,
                serverHostname: "localhost"
            )
            #expect(outcome.client.contains("CERTIFICATE_VERIFY_FAILED"))
            #expect(outcome.server.contains("UNKNOWN_CA"))
        }

        // MARK: Mutual TLS

        @Test func mutualTLSFailsWithoutAClientCertificate() async throws {
            let outcome = try await handshake(
                presenting: .valid,
                serverHostname: "localhost",
                requireClientCertificateSignedBy: authority.rootCertificateDER
            )
            #expect(outcome.server.contains("PEER_DID_NOT_RETURN_A_CERTIFICATE"), "the server accepted a client without a certificate")
            #expect(outcome.client.contains("CERTIFICATE_REQUIRED"), "the client was answered although the server rejected it")
        }

        @Test func mutualTLSSucceedsWithTheClientIdentity() async throws {
            let outcome = try await handshake(
                presenting: .valid,
                serverHostname: "localhost",
                requireClientCertificateSignedBy: authority.rootCertificateDER,
                clientIdentity: authority.clientIdentity
            )
            try outcome.requireSuccess()
        }

        @Test func mutualTLSFailsWithAnotherAuthoritysClientIdentity() async throws {
            let other = try TestCertificateAuthority.generate()
            let outcome = try await handshake(
                presenting: .valid,
                serverHostname: "localhost",
                requireClientCertificateSignedBy: authority.rootCertificateDER,
                clientIdentity: other.clientIdentity
            )
            #expect(outcome.server.contains("CERTIFICATE_VERIFY_FAILED"), "the server accepted a client certificate of another CA")
            #expect(outcome.client.contains("UNKNOWN_CA"))
        }

        // MARK: Harness

        /// What each side saw: `nil` when it exchanged application data, else the error.
        struct Outcome {
            var server: (any Error)?
            var client: (any Error)?

            func requireSuccess() throws {
                if let server { throw HandshakeTestError.failed(side: "server", server) }
                if let client { throw HandshakeTestError.failed(side: "client", client) }
            }
        }

        func handshake(
            presenting kind: ServerChainKind,
            serverHostname: String?,
            host: String = "127.0.0.1",
            requireClientCertificateSignedBy clientCA: [UInt8]? = nil,
            clientIdentity: ServerChain? = nil
        ) async throws -> Outcome {
            try await handshake(
                presenting: authority.serverChain(kind),
                trusting: authority.rootCertificateDER,
                serverHostname: serverHostname,
                host: host,
                requireClientCertificateSignedBy: clientCA,
                clientIdentity: clientIdentity
            )
        }

        /// Starts a TLS server on `host` presenting `chain`, connects a client trusting only
        /// `trustedRootDER`, and reports each side's result. The client sends "ping" (NIOSSL
        /// holds it until the handshake completes); the server answers "pong" once it has read
        /// it. Success means the server read the ping and the client read the pong.
        func handshake(
            presenting chain: ServerChain,
            trusting trustedRootDER: [UInt8],
            serverHostname: String?,
            host: String = "127.0.0.1",
            requireClientCertificateSignedBy clientCA: [UInt8]? = nil,
            clientIdentity: ServerChain? = nil
        ) async throws -> Outcome {
            let group = MultiThreadedEventLoopGroup.singleton
            let serverContext = try NIOSSLContext(
                configuration: chain.makeServerTLSConfiguration(requireClientCertificateSignedBy: clientCA)
            )

            var clientConfiguration = TLSConfiguration.makeClientConfiguration()
            clientConfiguration.trustRoots = .certificates([try NIOSSLCertificate(bytes: trustedRootDER, format: .der)])
            if let clientIdentity {
                clientConfiguration.certificateChain = try clientIdentity.certificatesDER.map {
                    .certificate(try NIOSSLCertificate(bytes: $0, format: .der))
                }
                clientConfiguration.privateKey = .privateKey(
                    try NIOSSLPrivateKey(bytes: clientIdentity.privateKeyDER, format: .der)
                )
            }
            let clientContext = try NIOSSLContext(configuration: clientConfiguration)

            let serverResult = group.next().makePromise(of: Void.self)
            let clientResult = group.next().makePromise(of: Void.self)

            let serverChannel = try await ServerBootstrap(group: group)
                .childChannelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: serverContext))
                        try channel.pipeline.syncOperations.addHandler(PongServer(result: serverResult))
                    }
                }
                .bind(host: host, port: 0)
                .get()

            do {
                let address = try #require(serverChannel.localAddress)
                let clientChannel = try await ClientBootstrap(group: group)
                    .connectTimeout(.seconds(5))
                    .channelInitializer { channel in
                        channel.eventLoop.makeCompletedFuture {
                            try channel.pipeline.syncOperations.addHandler(
                                NIOSSLClientHandler(context: clientContext, serverHostname: serverHostname)
                            )
                            try channel.pipeline.syncOperations.addHandler(PingClient(result: clientResult))
                        }
                    }
                    .connect(to: address)
                    .get()

                let outcome = Outcome(
                    server: await Self.error(of: serverResult.futureResult),
                    client: await Self.error(of: clientResult.futureResult)
                )
                try? await clientChannel.close()
                try await serverChannel.close()
                return outcome
            } catch {
                try? await serverChannel.close()
                throw error
            }
        }

        static func error(of future: EventLoopFuture<Void>) async -> (any Error)? {
            do {
                try await future.get()
                return nil
            } catch {
                return error
            }
        }
    }
}

fileprivate extension Optional where Wrapped == any Error {
    /// Whether this is an error whose description contains `fragment` (BoringSSL's reason codes
    /// such as `UNKNOWN_CA` appear there).
    func contains(_ fragment: String) -> Bool {
        guard let error = self else { return false }
        return String(describing: error).contains(fragment)
    }
}

private enum HandshakeTestError: Error, CustomStringConvertible {
    case closedBeforeData
    case timedOut
    case failed(side: String, any Error)

    var description: String {
        switch self {
        case .closedBeforeData: "the connection closed before application data arrived"
        case .timedOut: "no application data within 10 seconds"
        case .failed(let side, let error): "the \(side) failed: \(error)"
        }
    }
}

/// Server side of the probe: answers "pong" to the first bytes it reads.
private final class PongServer: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let result: EventLoopPromise<Void>

    init(result: EventLoopPromise<Void>) {
        self.result = result
    }

    func handlerAdded(context: ChannelHandlerContext) {
        let result = self.result
        context.eventLoop.scheduleTask(in: .seconds(10)) { result.fail(HandshakeTestError.timedOut) }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let buffer = context.channel.allocator.buffer(string: "pong")
        context.writeAndFlush(wrapOutboundOut(buffer), promise: nil)
        result.succeed()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        result.fail(error)
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        result.fail(HandshakeTestError.closedBeforeData)
        context.fireChannelInactive()
    }
}

/// Client side of the probe: sends "ping" at once and succeeds when any answer arrives.
private final class PingClient: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let result: EventLoopPromise<Void>

    init(result: EventLoopPromise<Void>) {
        self.result = result
    }

    func handlerAdded(context: ChannelHandlerContext) {
        let result = self.result
        context.eventLoop.scheduleTask(in: .seconds(10)) { result.fail(HandshakeTestError.timedOut) }
    }

    func channelActive(context: ChannelHandlerContext) {
        let buffer = context.channel.allocator.buffer(string: "ping")
        context.writeAndFlush(wrapOutboundOut(buffer), promise: nil)
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        result.succeed()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        result.fail(error)
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        result.fail(HandshakeTestError.closedBeforeData)
        context.fireChannelInactive()
    }
}
