import Crypto
import Foundation

/// Parses `WWW-Authenticate` challenges and builds the matching `Authorization` header for
/// Basic (RFC 7617) and Digest (RFC 7616: MD5, SHA-256, qop `auth`). Pure functions.
enum AuthenticationHeader {
    struct Challenge: Sendable, Equatable {
        var scheme: String
        var parameters: [String: String]
    }

    /// The first challenge in `header` (`Basic realm="x"`, `Digest realm="x", nonce="y", ...`).
    static func parse(_ header: String) -> Challenge? {
        let trimmed = header.trimmingCharacters(in: .whitespaces)
        guard let space = trimmed.firstIndex(of: " ") else {
            return trimmed.isEmpty ? nil : Challenge(scheme: trimmed, parameters: [:])
        }
        let scheme = String(trimmed[..<space])
        var parameters: [String: String] = [:]
        var rest = trimmed[trimmed.index(after: space)...]
        while !rest.isEmpty {
            rest = rest.drop { $0 == " " || $0 == "," }
            guard let equals = rest.firstIndex(of: "=") else { break }
            let name = rest[..<equals].trimmingCharacters(in: .whitespaces).lowercased()
            rest = rest[rest.index(after: equals)...]
            var value = ""
            if rest.first == "\"" {
                rest = rest.dropFirst()
                var escaped = false
                var end = rest.endIndex
                for index in rest.indices {
                    let character = rest[index]
                    if escaped {
                        value.append(character)
                        escaped = false
                    } else if character == "\\" {
                        escaped = true
                    } else if character == "\"" {
                        end = index
                        break
                    } else {
                        value.append(character)
                    }
                }
                rest = end < rest.endIndex ? rest[rest.index(after: end)...] : rest[rest.endIndex...]
            } else {
                let end = rest.firstIndex(of: ",") ?? rest.endIndex
                value = rest[..<end].trimmingCharacters(in: .whitespaces)
                rest = rest[end...]
            }
            parameters[name] = value
        }
        return Challenge(scheme: scheme, parameters: parameters)
    }

    /// The `Authorization` value answering `challenge`, or nil for a scheme we can't answer.
    static func authorization(
        for challenge: Challenge,
        user: String,
        password: String,
        method: String,
        uri: String,
        clientNonce: String = UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
    ) -> String? {
        switch challenge.scheme.lowercased() {
        case "basic":
            return "Basic " + Data("\(user):\(password)".utf8).base64EncodedString()
        case "digest":
            return digest(challenge, user: user, password: password, method: method, uri: uri, clientNonce: clientNonce)
        default:
            return nil
        }
    }

    private static func digest(
        _ challenge: Challenge, user: String, password: String, method: String, uri: String, clientNonce: String
    ) -> String? {
        guard let realm = challenge.parameters["realm"], let nonce = challenge.parameters["nonce"] else { return nil }
        let algorithm = challenge.parameters["algorithm"] ?? "MD5"
        let hash: (String) -> String
        switch algorithm.uppercased() {
        case "MD5": hash = { Insecure.MD5.hash(data: Data($0.utf8)).hex }
        case "SHA-256": hash = { SHA256.hash(data: Data($0.utf8)).hex }
        default: return nil
        }
        let qopOptions = (challenge.parameters["qop"] ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        let ha1 = hash("\(user):\(realm):\(password)")
        let ha2 = hash("\(method):\(uri)")
        var fields = [
            "username=\"\(user)\"", "realm=\"\(realm)\"", "nonce=\"\(nonce)\"", "uri=\"\(uri)\"", "algorithm=\(algorithm)",
        ]
        let response: String
        if qopOptions.contains("auth") {
            let nonceCount = "00000001"
            response = hash("\(ha1):\(nonce):\(nonceCount):\(clientNonce):auth:\(ha2)")
            fields += ["qop=auth", "nc=\(nonceCount)", "cnonce=\"\(clientNonce)\""]
        } else if qopOptions.isEmpty {
            response = hash("\(ha1):\(nonce):\(ha2)")
        } else {
            return nil  // auth-int would need the body's hash
        }
        fields.append("response=\"\(response)\"")
        if let opaque = challenge.parameters["opaque"] { fields.append("opaque=\"\(opaque)\"") }
        return "Digest " + fields.joined(separator: ", ")
    }
}

extension Digest {
    var hex: String { map { String(format: "%02x", $0) }.joined() }
}
