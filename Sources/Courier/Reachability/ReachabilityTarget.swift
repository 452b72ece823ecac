#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An IP address as its network-order bytes: 4 for IPv4, 16 for IPv6.
struct ReachabilityAddress: Hashable, Sendable, CustomStringConvertible {
    enum Family: Sendable { case ipv4, ipv6 }

    let bytes: [UInt8]

    var family: Family { bytes.count == 4 ? .ipv4 : .ipv6 }

    /// nil unless `bytes` holds 4 or 16 bytes.
    init?(bytes: [UInt8]) {
        guard bytes.count == 4 || bytes.count == 16 else { return nil }
        self.bytes = bytes
    }

    /// Parses an IPv4 dotted quad or an IPv6 literal (brackets allowed: `[::1]`); nil for
    /// anything else, zone suffixes (`fe80::1%eth0`) and NULs included (`inet_pton` would stop at
    /// a NUL and read `"10.0.0.1\0junk"` as 10.0.0.1).
    init?(literal text: String) {
        var body = Substring(text)
        if body.hasPrefix("["), body.hasSuffix("]") { body = body.dropFirst().dropLast() }
        guard !body.isEmpty, body.utf8.count <= 64, !body.utf8.contains(0) else { return nil }
        var four = [UInt8](repeating: 0, count: 4)
        if inet_pton(AF_INET, String(body), &four) == 1 {
            self.bytes = four
            return
        }
        var sixteen = [UInt8](repeating: 0, count: 16)
        if inet_pton(AF_INET6, String(body), &sixteen) == 1 {
            self.bytes = sixteen
            return
        }
        return nil
    }

    /// True for 127.0.0.0/8 and ::1.
    var isLoopback: Bool {
        switch family {
        case .ipv4: return bytes[0] == 127
        case .ipv6: return bytes == [UInt8](repeating: 0, count: 15) + [1]
        }
    }

    var description: String {
        switch family {
        case .ipv4: return bytes.map(String.init).joined(separator: ".")
        case .ipv6:
            var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
            var copy = bytes
            guard inet_ntop(AF_INET6, &copy, &text, socklen_t(text.count)) != nil else { return "?" }
            return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
    }
}

/// What a reachability manager watches.
enum ReachabilityTarget: Sendable, Hashable, CustomStringConvertible {
    /// The path general traffic takes (AFNetworking's zero address): the best default route
    /// (IPv4, then IPv6) whose link is usable.
    case defaultRoute
    /// One IP address.
    case address(ReachabilityAddress)
    /// A host name, resolved on start and again when routes change.
    case domain(String)

    /// Whether `name` can be a host name to resolve: 1 to 253 characters (a final dot
    /// aside) of labels of 1 to 63 letters, digits, `-` or `_`, no label starting or ending
    /// with `-`; or an IP literal.
    static func isValidHostName(_ name: String) -> Bool {
        if ReachabilityAddress(literal: name) != nil { return true }
        var text = Substring(name)
        if text.hasSuffix(".") { text = text.dropLast() }
        guard !text.isEmpty, text.utf8.count <= 253 else { return false }
        for label in text.split(separator: ".", omittingEmptySubsequences: false) {
            guard (1...63).contains(label.utf8.count), label.first != "-", label.last != "-" else { return false }
            let allowed = label.utf8.allSatisfy { byte in
                (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z"))
                    || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
                    || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
                    || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
            }
            guard allowed else { return false }
        }
        return true
    }

    var description: String {
        switch self {
        case .defaultRoute: return "the default route"
        case .address(let address): return address.description
        case .domain(let name): return name
        }
    }
}
