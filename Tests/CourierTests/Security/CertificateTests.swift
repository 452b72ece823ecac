import Crypto
import CourierTestServer
import Foundation
import Testing

@testable import Courier

@Suite("Certificate")
struct CertificateTests {
    let authority: TestCertificateAuthority

    init() throws {
        authority = try TestCertificateAuthority.shared
    }

    /// A fresh temporary folder, removed by the caller.
    func temporaryDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory
            .appendingPathComponent("courier-certificates-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// The error `body` throws as a ``CourierError``, or nil.
    func courierError(_ body: () throws -> Void) -> CourierError? {
        do {
            try body()
            return nil
        } catch let error as CourierError {
            return error
        } catch {
            Issue.record("not a CourierError: \(error)")
            return nil
        }
    }

    // MARK: - DER and PEM

    @Test func derRoundTripAndEquality() throws {
        let der = authority.rootCertificateDER
        let certificate = try Certificate(derEncoded: Data(der))
        #expect(certificate.derBytes == der)
        #expect(certificate.data == Data(der))
        #expect(certificate.subjectSummary.contains("CN=Courier Test Root CA"))
        #expect(certificate.issuerSummary == certificate.subjectSummary)
        #expect(certificate.notValidBefore < authority.generatedAt)
        #expect(certificate.notValidAfter > authority.generatedAt)
        #expect(certificate.description.contains("Courier Test Root CA"))

        let again = try Certificate(derEncoded: Data(der))
        let intermediate = try Certificate(derEncoded: Data(authority.intermediateCertificateDER))
        #expect(certificate == again)
        #expect(certificate != intermediate)
        #expect(Set([certificate, again, intermediate]).count == 2)
    }

    @Test func publicKeyIsTheFullSubjectPublicKeyInfo() throws {
        let chain = authority.serverChain(.valid)
        let leaf = try Certificate(derEncoded: Data(chain.certificatesDER[0]))
        let key = try P256.Signing.PrivateKey(derRepresentation: chain.privateKeyDER)
        // swift-crypto's derRepresentation of a public key is its SubjectPublicKeyInfo.
        #expect(leaf.publicKeyDER == Array(key.publicKey.derRepresentation))
        let intermediate = try Certificate(derEncoded: Data(authority.intermediateCertificateDER))
        #expect(leaf.publicKeyDER != intermediate.publicKeyDER)
    }

    @Test func pemSingleAndMultiple() throws {
        let root = try Certificate(derEncoded: Data(authority.rootCertificateDER))
        #expect(try Certificate(pemEncoded: authority.rootCertificatePEM) == root)

        let chain = authority.serverChain(.valid)
        let parsed = try Certificate.certificates(pemEncoded: chain.certificatesPEM)
        #expect(parsed.map(\.derBytes) == chain.certificatesDER)
        // The single-certificate initializer takes the first block.
        #expect(try Certificate(pemEncoded: chain.certificatesPEM).derBytes == chain.certificatesDER[0])
    }

    @Test func pemWithSurroundingTextAndOtherBlocks() throws {
        let chain = authority.serverChain(.valid)
        let text = "subject=CN = localhost\n" + chain.privateKeyPEM + "# a comment\n" + chain.certificatesPEM + "trailing\n"
        let parsed = try Certificate.certificates(pemEncoded: text)
        #expect(parsed.map(\.derBytes) == chain.certificatesDER)
    }

    @Test func garbageInputThrowsTypedErrors() {
        for bytes in [Data(), Data("hello".utf8), Data(authority.rootCertificateDER.prefix(40))] {
            let error = courierError { _ = try Certificate(derEncoded: bytes) }
            guard case .invalidCertificate(let reason) = error else {
                Issue.record("expected invalidCertificate for \(bytes.count) bytes, got \(String(describing: error))")
                continue
            }
            #expect(!reason.isEmpty)
        }
        let noBlock = courierError { _ = try Certificate(pemEncoded: "just text") }
        guard case .invalidCertificate(let reason) = noBlock else {
            Issue.record("expected invalidCertificate, got \(String(describing: noBlock))")
            return
        }
        #expect(reason.contains("BEGIN CERTIFICATE"))
        #expect(noBlock?.description.hasPrefix("Invalid certificate:") == true)

        let keyOnly = courierError { _ = try Certificate.certificates(pemEncoded: authority.serverChain(.valid).privateKeyPEM) }
        guard case .invalidCertificate = keyOnly else {
            Issue.record("expected invalidCertificate, got \(String(describing: keyOnly))")
            return
        }
        let badBase64 = "-----BEGIN CERTIFICATE-----\n!!!!\n-----END CERTIFICATE-----\n"
        guard case .invalidCertificate = courierError({ _ = try Certificate(pemEncoded: badBase64) }) else {
            Issue.record("bad base64 accepted")
            return
        }
        let notACertificate = "-----BEGIN CERTIFICATE-----\naGVsbG8gd29ybGQ=\n-----END CERTIFICATE-----\n"
        guard case .invalidCertificate = courierError({ _ = try Certificate.certificates(pemEncoded: notACertificate) }) else {
            Issue.record("a PEM block that is not a certificate was accepted")
            return
        }
    }

    // MARK: - Files and folders

    @Test func certificatesInDirectoryReadsDERAndPEMByContent() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let chain = authority.serverChain(.valid)
        try Data(authority.rootCertificateDER).write(to: directory.appendingPathComponent("root.cer"))
        try Data(chain.certificatesPEM.utf8).write(to: directory.appendingPathComponent("chain.pem"))
        // Duplicates collapse; a PEM file named .cer and a DER file named .crt both work.
        try Data(authority.intermediateCertificatePEM.utf8).write(to: directory.appendingPathComponent("again.CER"))
        try Data(authority.intermediateCertificateDER).write(to: directory.appendingPathComponent("intermediate.crt"))
        let selfSigned = authority.serverChain(.selfSigned).certificatesDER[0]
        try Data(selfSigned).write(to: directory.appendingPathComponent("self.der"))
        // Skipped: other extensions, hidden files, folders.
        try Data("not a certificate".utf8).write(to: directory.appendingPathComponent("notes.txt"))
        try Data("garbage".utf8).write(to: directory.appendingPathComponent(".hidden.cer"))
        try FileManager.default.createDirectory(
            at: directory.appendingPathComponent("sub.pem"),
            withIntermediateDirectories: false
        )

        let loaded = try Certificate.certificates(inDirectory: directory)
        let expected = Set(try ([authority.rootCertificateDER, selfSigned] + chain.certificatesDER).map {
            try Certificate(derEncoded: Data($0))
        })
        #expect(loaded == expected)
        #expect(loaded.count == 4)
    }

    @Test func emptyDirectoryGivesNoCertificates() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        #expect(try Certificate.certificates(inDirectory: directory).isEmpty)
    }

    @Test func badFileInDirectoryIsNamed() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try Data(authority.rootCertificateDER).write(to: directory.appendingPathComponent("root.cer"))
        let bad = directory.appendingPathComponent("bad.cer")
        try Data("this is not DER".utf8).write(to: bad)

        let error = courierError { _ = try Certificate.certificates(inDirectory: directory) }
        guard case .invalidCertificateFile(let path, let reason) = error else {
            Issue.record("expected invalidCertificateFile, got \(String(describing: error))")
            return
        }
        #expect(path == bad.path)
        #expect(!reason.isEmpty)
        #expect(error?.description.contains("bad.cer") == true)
    }

    @Test func unreadablePathsAreNamed() throws {
        let missing = FileManager.default.temporaryDirectory.appendingPathComponent("courier-missing-\(UUID().uuidString)")
        let directoryError = courierError { _ = try Certificate.certificates(inDirectory: missing) }
        guard case .certificateFileUnreadable(let path, let reason) = directoryError else {
            Issue.record("expected certificateFileUnreadable, got \(String(describing: directoryError))")
            return
        }
        #expect(path == missing.path)
        #expect(reason == "no such file or directory")

        let file = missing.appendingPathComponent("root.pem")
        let fileError = courierError { _ = try Certificate.certificates(contentsOf: file) }
        guard case .certificateFileUnreadable(file.path, _) = fileError else {
            Issue.record("expected certificateFileUnreadable, got \(String(describing: fileError))")
            return
        }
    }

    @Test func certificatesOfOneFile() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let chain = authority.serverChain(.valid)
        let pem = directory.appendingPathComponent("chain.pem")
        try Data(chain.certificatesPEM.utf8).write(to: pem)
        #expect(try Certificate.certificates(contentsOf: pem).map(\.derBytes) == chain.certificatesDER)

        let keyFile = directory.appendingPathComponent("key.pem")
        try Data(chain.privateKeyPEM.utf8).write(to: keyFile)
        let error = courierError { _ = try Certificate.certificates(contentsOf: keyFile) }
        guard case .invalidCertificateFile(keyFile.path, _) = error else {
            Issue.record("expected invalidCertificateFile, got \(String(describing: error))")
            return
        }
    }
}
