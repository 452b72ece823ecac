import Crypto
import Foundation
import NIOHTTP1

/// What a `/ws/…` endpoint does once its handshake is answered, as a value the router
/// returns; ``TestWebSocketHandler`` carries it out.
///
/// Endpoints, over an HTTP/1.1 Upgrade and over HTTP/2 as RFC 8441 extended-CONNECT streams
/// (every one echoes what it receives unless it says otherwise):
/// - `/ws/echo`: echoes text and binary messages; answers pings and closes.
/// - `/ws/close?code=N&reason=R`: closes with `N` and `R` right after the handshake.
/// - `/ws/ping?count=N`: sends `N` pings (payloads `ping-1`…) first.
/// - `/ws/flood?count=N&size=S`: sends `N` binary messages of `S` bytes first.
/// - `/ws/slow?delay=MS`: a slow reader: after each message it stops reading for `MS` ms.
/// - `/ws/raw?frames=BASE64URL`: writes those bytes (frames a test built) after the handshake.
/// - `/ws/headers`: sends the handshake request's headers (httpbin's JSON) as its first message.
/// - `/ws/basic-auth/USER/PASSWORD`: a 401 with a Basic challenge unless the handshake carries
///   those credentials.
/// - `/ws/hostile/MODE`: `masked`, `bad-utf8`, `oversize`, `fragmented-control`,
///   `long-control`, `reserved-bits`, `reserved-opcode`, `orphan-continuation`, `bad-accept`,
///   `no-close-reply`, `bomb?size=N` (with permessage-deflate: one message inflating to `N`
///   zero bytes).
///
/// Every endpoint takes `protocol=none` (choose no subprotocol; by default the first one
/// offered is chosen) and `deflate=off` or `deflate=PARAMS` (the permessage-deflate answer,
/// parameters joined by `,`: `server_no_context_takeover,client_max_window_bits=10`; by
/// default `permessage-deflate` alone, when the client offers it).
struct WebSocketEndpoint {
    enum Behaviour {
        case echo
        case closeAtOnce(code: Int, reason: String)
        case ping(count: Int)
        case flood(count: Int, size: Int)
        case slow(delayMilliseconds: Int)
        case raw([UInt8])
        /// Sends one text message first: the handshake request's headers as JSON.
        case sendFirst(String)
        case noCloseReply
        case bomb(size: Int)
    }

    var behaviour: Behaviour
    /// The `101`'s `Sec-WebSocket-Accept` is wrong.
    var badAccept = false
    var subprotocol: String?
    /// The negotiated permessage-deflate answer (parameters), nil when not negotiated.
    var deflate: [String]?

    /// The reply to a `/ws/…` request over HTTP/1.1: a `400` when it is not a WebSocket
    /// handshake, a `404` for an unknown endpoint, else the upgrade.
    static func reply(to request: ServerRequest, _ path: [String]) -> ServerReply {
        let headers = request.headers
        guard headers["upgrade"].contains(where: { $0.lowercased() == "websocket" }),
            let key = headers.first(name: "sec-websocket-key"), Data(base64Encoded: key)?.count == 16
        else {
            return .text("A WebSocket endpoint: send a WebSocket handshake (Upgrade: websocket, version 13)\n", status: .badRequest)
        }
        switch accept(request, path) {
        case .refuse(let reply):
            return reply
        case .accept(let endpoint):
            var response = "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            response += "Sec-WebSocket-Accept: \(endpoint.badAccept ? accept(for: key + "x") : accept(for: key))\r\n"
            for (name, value) in endpoint.answerFields { response += "\(name): \(value)\r\n" }
            response += "\r\n"
            return .webSocket(response: Array(response.utf8), endpoint)
        }
    }

    /// What a handshake to a `/ws/…` path comes to, over either protocol.
    enum Decision {
        /// Not accepted: this answer (a 400, 401 or 404).
        case refuse(ServerReply)
        /// Accepted, with the subprotocol and permessage-deflate answers chosen.
        case accept(WebSocketEndpoint)
    }

    /// Checks the version and the credentials a path asks for, finds the endpoint, and chooses
    /// the subprotocol and the permessage-deflate answer.
    static func accept(_ request: ServerRequest, _ path: [String]) -> Decision {
        let headers = request.headers
        guard headers.first(name: "sec-websocket-version") == "13" else {
            return .refuse(.text("A WebSocket endpoint: send a WebSocket handshake (version 13)\n", status: .badRequest))
        }
        let query = Dictionary(request.query.map { ($0.name, $0.value) }, uniquingKeysWith: { first, _ in first })
        if path.count == 3, path[0] == "basic-auth" {
            guard let credentials = AuthEndpoints.basicCredentials(request), credentials == (path[1], path[2]) else {
                return .refuse(.empty(.unauthorized, headers: ["WWW-Authenticate": "Basic realm=\"ws\""]))
            }
        }
        let found: WebSocketEndpoint?
        if path == ["headers"] {
            found = WebSocketEndpoint(behaviour: .sendFirst(String(decoding: request.headersJSON.encoded, as: UTF8.self)))
        } else {
            found = endpoint(path, query: query)
        }
        guard var endpoint = found else {
            return .refuse(.text("No such WebSocket endpoint\n", status: .notFound))
        }
        let offered = headers["sec-websocket-protocol"].flatMap { $0.split(separator: ",") }
            .map { $0.trimmingCharacters(in: .whitespaces) }
        if query["protocol"] != "none" { endpoint.subprotocol = offered.first }
        let offersDeflate = headers["sec-websocket-extensions"].contains { $0.lowercased().contains("permessage-deflate") }
        if offersDeflate, query["deflate"] != "off" {
            endpoint.deflate = (query["deflate"] ?? "").split(separator: ",").map(String.init)
        }
        return .accept(endpoint)
    }

    /// The answer's `Sec-WebSocket-Protocol` and `Sec-WebSocket-Extensions` fields.
    var answerFields: [(String, String)] {
        var fields: [(String, String)] = []
        if let subprotocol { fields.append(("Sec-WebSocket-Protocol", subprotocol)) }
        if let deflate { fields.append(("Sec-WebSocket-Extensions", (["permessage-deflate"] + deflate).joined(separator: "; "))) }
        return fields
    }

    /// base64(SHA-1(key + RFC 6455's GUID)).
    static func accept(for key: String) -> String {
        Data(Insecure.SHA1.hash(data: Data((key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").utf8))).base64EncodedString()
    }

    private static func endpoint(_ path: [String], query: [String: String]) -> WebSocketEndpoint? {
        func number(_ name: String, _ fallback: Int) -> Int { query[name].flatMap(Int.init) ?? fallback }
        switch (path.first, path.count) {
        case ("echo", 1), ("basic-auth", 3): return .init(behaviour: .echo)
        case ("close", 1): return .init(behaviour: .closeAtOnce(code: number("code", 1000), reason: query["reason"] ?? ""))
        case ("ping", 1): return .init(behaviour: .ping(count: number("count", 1)))
        case ("flood", 1): return .init(behaviour: .flood(count: number("count", 100), size: number("size", 1024)))
        case ("slow", 1): return .init(behaviour: .slow(delayMilliseconds: number("delay", 100)))
        case ("raw", 1):
            guard let frames = query["frames"].flatMap(Self.base64URLDecoded) else { return nil }
            return .init(behaviour: .raw(frames))
        case ("hostile", 2): return hostile(path[1], size: number("size", 16 << 20))
        default: return nil
        }
    }

    private static func hostile(_ mode: String, size: Int) -> WebSocketEndpoint? {
        let frames: [UInt8]
        switch mode {
        case "masked": frames = ServerFrame.bytes(.text, Array("masked".utf8), mask: [1, 2, 3, 4])
        case "bad-utf8": frames = ServerFrame.bytes(.text, [0xCE, 0xBA, 0xE1, 0xBD, 0xB9, 0xCF, 0x83, 0xCE, 0xBC, 0xCE, 0xB5, 0xED, 0xA0, 0x80])
        case "oversize": frames = ServerFrame.header(.binary, length: 2 << 20) + Array(repeating: 0x61, count: 4096)
        case "fragmented-control": frames = ServerFrame.bytes(.ping, Array("ping".utf8), fin: false)
        case "long-control": frames = ServerFrame.bytes(.ping, Array(repeating: 0x2A, count: 126))
        case "reserved-bits": frames = ServerFrame.bytes(.text, Array("rsv".utf8), rsv: 0x20)
        case "reserved-opcode": frames = ServerFrame.bytes(.reserved3, [])
        case "orphan-continuation": frames = ServerFrame.bytes(.continuation, Array("orphan".utf8))
        case "bad-accept": return .init(behaviour: .echo, badAccept: true)
        case "no-close-reply": return .init(behaviour: .noCloseReply)
        case "bomb": return .init(behaviour: .bomb(size: size))
        default: return nil
        }
        return .init(behaviour: .raw(frames))
    }

    static func base64URLDecoded(_ text: String) -> [UInt8]? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        return Data(base64Encoded: base64).map(Array.init)
    }
}
