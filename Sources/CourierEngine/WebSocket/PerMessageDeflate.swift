/// RFC 7692's permessage-deflate negotiation, as values: the offer Courier sends and what the
/// server's answer allows. No I/O.
///
/// Courier offers `permessage-deflate; client_max_window_bits` (it accepts any window the
/// server sets for it). The server's answer may carry `server_no_context_takeover`,
/// `client_no_context_takeover`, `server_max_window_bits=8…15` and
/// `client_max_window_bits=8…15`, each at most once; anything else fails the handshake
/// (RFC 7692 §5: the client must fail the connection when the response is not valid).
public struct PerMessageDeflate: Sendable, Equatable {
    /// The server resets its compression context after each message: Courier's inflater
    /// does the same.
    public var serverNoContextTakeover = false
    /// Courier must reset its compression context after each message.
    public var clientNoContextTakeover = false
    /// The largest window (base-2 logarithm) the server compresses with.
    public var serverMaxWindowBits = 15
    /// The largest window Courier may compress with. At 8, which zlib's raw deflate cannot
    /// produce, Courier sends its messages uncompressed (RSV1 is per message).
    public var clientMaxWindowBits = 15

    /// Parameters with the defaults of RFC 7692 (no parameter given).
    public init() {}

    /// The `Sec-WebSocket-Extensions` value Courier offers.
    static let offer = "permessage-deflate; client_max_window_bits"

    /// What the server's `Sec-WebSocket-Extensions` fields agree to: nil when they name no
    /// extension, the parameters when they accept permessage-deflate; throws a reason when
    /// they are not a valid answer to ``offer`` (or name an extension that was not offered).
    static func negotiated(from fields: [String], offered: Bool) throws(NegotiationError) -> PerMessageDeflate? {
        let extensions = fields.flatMap { Self.splitList($0, separator: ",") }.filter { !$0.isEmpty }
        guard !extensions.isEmpty else { return nil }
        guard offered else { throw NegotiationError("the server agreed to an extension that was not offered: \(extensions[0])") }
        guard extensions.count == 1 else {
            throw NegotiationError("the server agreed to \(extensions.count) extensions; only permessage-deflate was offered")
        }
        var parts = Self.splitList(extensions[0], separator: ";")
        let name = parts.isEmpty ? "" : parts.removeFirst()
        guard name.lowercased() == "permessage-deflate" else {
            throw NegotiationError("the server agreed to an extension that was not offered: \(name)")
        }
        var result = PerMessageDeflate()
        var seen = Set<String>()
        for part in parts {
            guard !part.isEmpty else { throw NegotiationError("permessage-deflate has an empty parameter") }
            let pieces = part.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: " \t") }
            let key = pieces[0].lowercased()
            var value = pieces.count > 1 ? pieces[1] : nil
            if let quoted = value, quoted.count >= 2, quoted.hasPrefix("\""), quoted.hasSuffix("\"") {
                value = String(quoted.dropFirst().dropLast())
            }
            guard seen.insert(key).inserted else { throw NegotiationError("permessage-deflate parameter \(key) appears twice") }
            switch key {
            case "server_no_context_takeover", "client_no_context_takeover":
                guard value == nil else { throw NegotiationError("permessage-deflate parameter \(key) takes no value") }
                if key == "server_no_context_takeover" { result.serverNoContextTakeover = true } else { result.clientNoContextTakeover = true }
            case "server_max_window_bits", "client_max_window_bits":
                guard let value, let bits = Int(value), (8...15).contains(bits), value.allSatisfy(\.isASCIIDigit) else {
                    throw NegotiationError("permessage-deflate parameter \(key) needs a window size 8-15, got \(value ?? "none")")
                }
                if key == "server_max_window_bits" { result.serverMaxWindowBits = bits } else { result.clientMaxWindowBits = bits }
            default:
                throw NegotiationError("permessage-deflate has no parameter \(key)")
            }
        }
        return result
    }

    /// Why the server's extension answer is not acceptable.
    struct NegotiationError: Error, Equatable {
        let reason: String
        init(_ reason: String) { self.reason = reason }
    }

    private static func splitList(_ value: String, separator: Character) -> [String] {
        value.split(separator: separator, omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: " \t") }
    }
}

extension Substring {
    fileprivate func trimmingCharacters(in set: String) -> String {
        var slice = self[...]
        while let first = slice.first, set.contains(first) { slice = slice.dropFirst() }
        while let last = slice.last, set.contains(last) { slice = slice.dropLast() }
        return String(slice)
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}
