import Courier
import Foundation

/// `--cert FILE [--cert-key FILE]`: the client identity for mutual TLS, read from PEM (a
/// certificate chain, leaf first, optionally with the key in the same file) or DER files.
enum ClientCertificate {
    /// One `-----BEGIN TYPE-----` block.
    struct PEMBlock: Equatable {
        var type: String
        var der: [UInt8]
    }

    /// The PEM blocks of `text`, in order; blocks that are not base64 are skipped. Pure.
    static func pemBlocks(_ text: String) -> [PEMBlock] {
        var blocks: [PEMBlock] = []
        var type: String?
        var body = ""
        for rawLine in text.split(omittingEmptySubsequences: true, whereSeparator: \.isNewline) {
            let line = rawLine.trimmingCharacters(in: .whitespaces)
            if line.hasPrefix("-----BEGIN "), line.hasSuffix("-----") {
                type = String(line.dropFirst(11).dropLast(5))
                body = ""
            } else if line.hasPrefix("-----END "), let current = type {
                if let der = Data(base64Encoded: body) { blocks.append(PEMBlock(type: current, der: Array(der))) }
                type = nil
            } else if type != nil {
                body += line
            }
        }
        return blocks
    }

    /// The identity named by the options.
    /// - Throws: ``RequestBuildError`` naming the file and what is missing or wrong.
    static func identity(certificatePath: String, keyPath: String?) throws -> EngineTLSConfiguration.ClientIdentity {
        let certificateData = try read(certificatePath, option: "--cert")
        var chain: [[UInt8]] = []
        var key: [UInt8]?
        if let text = String(data: certificateData, encoding: .utf8), text.contains("-----BEGIN ") {
            for block in pemBlocks(text) {
                if block.type == "CERTIFICATE" {
                    chain.append(block.der)
                } else if block.type.hasSuffix("PRIVATE KEY") {
                    key = try privateKey(block, path: certificatePath)
                }
            }
        } else {
            chain = [Array(certificateData)]
        }
        guard !chain.isEmpty else {
            throw RequestBuildError(description: "--cert \(certificatePath): no -----BEGIN CERTIFICATE----- block")
        }
        if let keyPath {
            let keyData = try read(keyPath, option: "--cert-key")
            if let text = String(data: keyData, encoding: .utf8), text.contains("-----BEGIN ") {
                guard let block = pemBlocks(text).first(where: { $0.type.hasSuffix("PRIVATE KEY") }) else {
                    throw RequestBuildError(description: "--cert-key \(keyPath): no -----BEGIN PRIVATE KEY----- block")
                }
                key = try privateKey(block, path: keyPath)
            } else {
                key = Array(keyData)
            }
        }
        guard let key else {
            throw RequestBuildError(
                description: "--cert \(certificatePath) holds no private key; give it with --cert-key FILE")
        }
        return EngineTLSConfiguration.ClientIdentity(certificateChainDER: chain, privateKeyDER: key)
    }

    private static func privateKey(_ block: PEMBlock, path: String) throws -> [UInt8] {
        guard block.type != "ENCRYPTED PRIVATE KEY" else {
            throw RequestBuildError(description: "\(path): the private key is encrypted; give an unencrypted key")
        }
        return block.der
    }

    private static func read(_ path: String, option: String) throws -> Data {
        do {
            return try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw RequestBuildError(description: "\(option) \(path): no such readable file")
        }
    }
}
