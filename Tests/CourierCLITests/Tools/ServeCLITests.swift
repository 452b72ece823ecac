import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `courier serve` as a user runs it: started, used, stopped with Ctrl-C or `kill`.
@Suite("courier serve")
struct ServeCLITests {
    @Test("serve --tls writes its root CA for curl and removes it (and its directory) on SIGINT and SIGTERM", arguments: [SIGINT, SIGTERM])
    func tlsTemporaryFilesRemoved(signal: Int32) async throws {
        let child = try CourierChild(["serve", "--port", "0", "--tls", "valid"])
        let announced = await child.waitForOutput(containing: "Root CA certificate (PEM): ")
        try #require(announced, "\(child.output)\n\(child.errorOutput)")
        let line = child.output.split(separator: "\n").first { $0.hasPrefix("Root CA certificate (PEM): ") } ?? ""
        let path = String(line.dropFirst("Root CA certificate (PEM): ".count).prefix { $0 != " " })
        let pem = try String(contentsOfFile: path, encoding: .utf8)
        #expect(pem.hasPrefix("-----BEGIN CERTIFICATE-----"), "\(pem)")
        child.send(signal)
        let end = await child.waitForExit()
        #expect(end.reason == .exit && end.status == 0, "\(end) \(child.errorOutput)")
        #expect(!FileManager.default.fileExists(atPath: path), "\(path) is left behind")
        let directory = URL(fileURLWithPath: path).deletingLastPathComponent().path
        #expect(!FileManager.default.fileExists(atPath: directory), "\(directory) is left behind")
    }
}
