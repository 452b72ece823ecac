import CourierTestServer
import Foundation
import Testing

/// `--verify`, `--pin-cert` and `--pin-mode` against the HTTPS test server.
@Suite("courier TLS")
struct TLSCLITests {
    /// The test root CA as a PEM file.
    static func rootCAFile() throws -> URL {
        let file = try CourierProcess.temporaryDirectory().appendingPathComponent("root-ca.pem")
        try Data(TestCertificateAuthority.shared.rootCertificatePEM.utf8).write(to: file)
        return file
    }

    /// The leaf certificate a `kind` server presents, as a PEM file.
    static func leafFile(_ kind: ServerChainKind) throws -> URL {
        let chain = try TestCertificateAuthority.shared.serverChain(kind)
        guard let leaf = chain.certificatesDER.first else { throw CLITestFailure("empty chain") }
        let pem = "-----BEGIN CERTIFICATE-----\n" + Data(leaf).base64EncodedString(options: .lineLength64Characters)
            + "\n-----END CERTIFICATE-----\n"
        let file = try CourierProcess.temporaryDirectory().appendingPathComponent("\(kind).pem")
        try Data(pem.utf8).write(to: file)
        return file
    }

    @Test("the test CA is unknown by default: exit 8 and advice; --verify CA.pem accepts the server")
    func verifyWithCA() async throws {
        let server = try await TestServer.start(.init(tls: .valid))
        defer { Task { try await server.shutdown() } }
        let url = server.baseURL.absoluteString + "/get"
        let rejected = try await CourierProcess.run([url])
        #expect(rejected.status == 8, "\(rejected)")
        #expect(rejected.errors.hasPrefix("courier: error: TLS certificate rejected for "), "\(rejected)")
        #expect(rejected.errors.contains("Use --verify PATH to trust a CA, or --verify no to skip checks."), "\(rejected)")
        let accepted = try await CourierProcess.run(["--verify", try Self.rootCAFile().path, url])
        #expect(accepted.status == 0, "\(accepted)")
        #expect((try accepted.json()["url"] as? String)?.hasPrefix("https://") == true)
    }

    @Test("a CA file that does not exist is a usage error naming it")
    func missingCAFile() async throws {
        let run = try await CourierProcess.run(["--verify", "/nonexistent/ca.pem", "https://127.0.0.1:9/get"])
        #expect(run.status == 2, "\(run)")
        #expect(run.errors.contains("--verify /nonexistent/ca.pem"), "\(run)")
    }

    @Test("--verify no accepts a self-signed server (and any host name)")
    func verifyNo() async throws {
        let server = try await TestServer.start(.init(tls: .selfSigned))
        defer { Task { try await server.shutdown() } }
        let url = server.baseURL.absoluteString + "/get"
        let rejected = try await CourierProcess.run([url])
        #expect(rejected.status == 8, "\(rejected)")
        let accepted = try await CourierProcess.run(["--verify", "no", url])
        #expect(accepted.status == 0, "\(accepted)")
        #expect((try accepted.json()["url"] as? String)?.hasPrefix("https://") == true)
    }

    @Test("--pin-cert: the server's own leaf is accepted, another certificate is rejected with exit 8")
    func pinCertificate() async throws {
        let server = try await TestServer.start(.init(tls: .valid))
        defer { Task { try await server.shutdown() } }
        let url = server.baseURL.absoluteString + "/get"
        let ca = try Self.rootCAFile().path
        let right = try await CourierProcess.run(["--verify", ca, "--pin-cert", try Self.leafFile(.valid).path, url])
        #expect(right.status == 0, "\(right)")
        let wrong = try await CourierProcess.run(["--verify", ca, "--pin-cert", try Self.leafFile(.wrongHost).path, url])
        #expect(wrong.status == 8, "\(wrong)")
        #expect(wrong.errors.contains("pinned"), "\(wrong)")
        #expect(wrong.errors.contains("--pin-cert"), "\(wrong)")
    }

    @Test("--pin-mode public-key accepts a chain carrying the pinned key")
    func pinPublicKey() async throws {
        let server = try await TestServer.start(.init(tls: .valid))
        defer { Task { try await server.shutdown() } }
        let url = server.baseURL.absoluteString + "/get"
        let ca = try Self.rootCAFile().path
        let pinned = try Self.leafFile(.valid).path
        let run = try await CourierProcess.run(["--verify", ca, "--pin-cert", pinned, "--pin-mode", "public-key", url])
        #expect(run.status == 0, "\(run)")
        let other = try await CourierProcess.run([
            "--verify", ca, "--pin-cert", try Self.leafFile(.selfSigned).path, "--pin-mode", "public-key", url,
        ])
        #expect(other.status == 8, "\(other)")
        let badMode = try await CourierProcess.run(["--pin-cert", pinned, "--pin-mode", "leaf", url])
        #expect(badMode.status == 2 && badMode.errors.contains("--pin-mode"), "\(badMode)")
    }
}
