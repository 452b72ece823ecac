import Crypto
import Foundation
import NIOHPACK
import NIOHTTP1

/// RFC 6455 §4's opening handshake from the client's side, as values: the request's fields,
/// and whether the server's `101` completes it. No I/O.
struct WebSocketHandshake: Sendable {
    /// `Sec-WebSocket-Key`: 16 random bytes, base64.
    let key: String
    /// The subprotocols offered, preferred first.
    let protocols: [String]
    /// Whether permessage-deflate is offered.
    let offersDeflate: Bool

    /// What the server agreed to.
    struct Agreement: Sendable, Equatable {
        var subprotocol: String?
        var deflate: PerMessageDeflate?
    }

    init(protocols: [String], offersDeflate: Bool, key: String = Self.makeKey()) {
        self.key = key
        self.protocols = protocols
        self.offersDeflate = offersDeflate
    }

    static func makeKey() -> String {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }
        return Data(bytes).base64EncodedString()
    }

    /// The `Sec-WebSocket-Accept` a server must answer `key` with: base64(SHA-1(key + GUID)).
    static func accept(for key: String) -> String {
        let digest = Insecure.SHA1.hash(data: Data((key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").utf8))
        return Data(digest).base64EncodedString()
    }

    /// The handshake's own fields, added to the request's (which may not set them: they are
    /// replaced). A subprotocol name must be an HTTP token.
    func apply(to headers: inout HTTPHeaders) throws(WebSocketError) {
        for name in ["upgrade", "connection", "sec-websocket-key", "sec-websocket-version", "sec-websocket-extensions"] {
            headers.remove(name: name)
        }
        headers.add(name: "Upgrade", value: "websocket")
        headers.add(name: "Connection", value: "Upgrade")
        headers.add(name: "Sec-WebSocket-Key", value: key)
        headers.add(name: "Sec-WebSocket-Version", value: "13")
        if !protocols.isEmpty {
            for name in protocols where name.isEmpty || !name.utf8.allSatisfy(Self.isTokenByte) {
                throw .handshakeFailed("the subprotocol \"\(name)\" is not an HTTP token")
            }
            headers.replaceOrAdd(name: "Sec-WebSocket-Protocol", value: protocols.joined(separator: ", "))
        }
        if offersDeflate {
            headers.add(name: "Sec-WebSocket-Extensions", value: PerMessageDeflate.offer)
        }
    }

    /// The fields of an RFC 8441 extended CONNECT opening the socket as an HTTP/2 stream:
    /// the pseudo-header fields (`:protocol websocket`), the version, the subprotocols and
    /// the extension offer, then `head`'s own fields in lower case, without the ones HTTP/2
    /// forbids or the handshake sets itself (RFC 9113 §8.2.2).
    func extendedConnectHeaders(for head: HTTPRequestHead, scheme: String) throws(WebSocketError) -> HPACKHeaders {
        var own = HTTPHeaders()
        try apply(to: &own)
        var headers = HPACKHeaders()
        headers.add(name: ":method", value: "CONNECT")
        headers.add(name: ":protocol", value: "websocket")
        headers.add(name: ":scheme", value: scheme)
        headers.add(name: ":authority", value: head.headers.first(name: "host") ?? "")
        headers.add(name: ":path", value: head.uri.isEmpty ? "/" : head.uri)
        for (name, value) in own where !["upgrade", "connection", "sec-websocket-key"].contains(name.lowercased()) {
            headers.add(name: name.lowercased(), value: value)
        }
        let excluded: Set<String> = [
            "host", "connection", "upgrade", "keep-alive", "proxy-connection", "transfer-encoding", "te",
            "sec-websocket-key", "sec-websocket-version", "sec-websocket-protocol", "sec-websocket-extensions",
        ]
        for (name, value) in head.headers where !excluded.contains(name.lowercased()) {
            headers.add(name: name.lowercased(), value: value)
        }
        return headers
    }

    /// Whether `head` (a `101`) completes the handshake: `Upgrade: websocket`, `Connection:
    /// Upgrade`, the right `Sec-WebSocket-Accept`, a subprotocol that was offered (or none),
    /// and an extension answer that is valid for what was offered (RFC 6455 §4.1, RFC 7692 §5).
    func agreement(with head: HTTPResponseHead) throws(WebSocketError) -> Agreement {
        let headers = head.headers
        guard head.status == .switchingProtocols else {
            throw .handshakeFailed("the server answered \(head.status.code), not 101 Switching Protocols")
        }
        guard headers["upgrade"].contains(where: { $0.trimmingCharacters(in: .whitespaces).lowercased() == "websocket" }) else {
            throw .handshakeFailed("the 101 response has no \"Upgrade: websocket\"")
        }
        let connection = headers["connection"].flatMap { $0.split(separator: ",") }
            .map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        guard connection.contains("upgrade") else {
            throw .handshakeFailed("the 101 response has no \"Connection: Upgrade\"")
        }
        let expected = Self.accept(for: key)
        let accepts = headers["sec-websocket-accept"]
        guard accepts.count == 1, let accept = accepts.first?.trimmingCharacters(in: .whitespaces), accept == expected else {
            let got = accepts.isEmpty ? "none" : accepts.joined(separator: ", ")
            throw .handshakeFailed("the server's Sec-WebSocket-Accept is \(got), expected \(expected)")
        }
        return try negotiated(with: headers)
    }

    /// Whether an RFC 8441 extended CONNECT's response completes the handshake: a `2xx`
    /// (the stream is the socket; no `Upgrade` or `Sec-WebSocket-Accept` there), a subprotocol
    /// that was offered (or none), and a valid extension answer.
    func agreement(withExtendedConnectResponse head: HTTPResponseHead) throws(WebSocketError) -> Agreement {
        guard (200..<300).contains(head.status.code) else {
            throw .handshakeFailed("the server answered \(head.status.code), not 200")
        }
        return try negotiated(with: head.headers)
    }

    /// The subprotocol and permessage-deflate the server's fields choose, checked against the offer.
    private func negotiated(with headers: HTTPHeaders) throws(WebSocketError) -> Agreement {
        var agreement = Agreement()
        let chosen = headers["sec-websocket-protocol"].flatMap { $0.split(separator: ",") }
            .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        if let first = chosen.first {
            guard chosen.count == 1, protocols.contains(first) else {
                throw .handshakeFailed("the server chose the subprotocol \(chosen.joined(separator: ", ")), which was not offered")
            }
            agreement.subprotocol = first
        }
        do {
            agreement.deflate = try PerMessageDeflate.negotiated(from: headers["sec-websocket-extensions"], offered: offersDeflate)
        } catch {
            throw .handshakeFailed(error.reason)
        }
        return agreement
    }

    private static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        default:
            "!#$%&'*+-.^_`|~".utf8.contains(byte)
        }
    }
}
