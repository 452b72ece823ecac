import Foundation

#if canImport(Glibc)
import Glibc
private let systemConnect = Glibc.connect
#elseif canImport(Darwin)
import Darwin
private let systemConnect = Darwin.connect
#endif

/// How a raw exchange ended.
enum ConnectionEnd: Equatable {
    /// The server closed the connection (read returned 0).
    case closed
    /// The server reset the connection (ECONNRESET).
    case reset
    /// Nothing more arrived within the read timeout; the connection was still open.
    case timedOut
    /// The reader stopped by itself once a complete response had arrived.
    case complete
}

/// What a raw exchange produced: every byte the server sent, and how it ended.
struct RawExchange {
    var bytes: [UInt8]
    var end: ConnectionEnd

    var text: String { String(decoding: bytes, as: UTF8.self) }

    /// The parsed response, when a header block arrived.
    var response: ParsedResponse? { ParsedResponse(bytes) }
}

/// A response parsed from raw bytes: status, headers and body (de-chunked when chunked).
struct ParsedResponse {
    var statusLine: String
    var status: Int
    var headers: [(name: String, value: String)]
    var rawBody: [UInt8]
    /// The body after removing chunked framing; `nil` when the chunked framing is malformed.
    var body: [UInt8]?

    init?(_ bytes: [UInt8]) {
        guard let end = Self.headerEnd(bytes) else { return nil }
        let headText = String(decoding: bytes[..<end], as: UTF8.self)
        var lines = headText.components(separatedBy: "\r\n")
        // Skip interim 1xx responses.
        var remainder = Array(bytes[(end + 4)...])
        let statusLine = lines.removeFirst()
        let parts = statusLine.split(separator: " ", maxSplits: 2)
        guard parts.count >= 2, let status = Int(parts[1]) else { return nil }
        if (100..<200).contains(status) {
            guard let next = ParsedResponse(remainder) else { return nil }
            self = next
            return
        }
        self.statusLine = statusLine
        self.status = status
        self.headers = lines.compactMap { line in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (String(line[..<colon]).lowercased(), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
        if let length = headers.first(where: { $0.name == "content-length" }).flatMap({ Int($0.value) }), remainder.count > length {
            remainder = Array(remainder.prefix(length))
        }
        self.rawBody = remainder
        if headers.contains(where: { $0.name == "transfer-encoding" && $0.value.lowercased().contains("chunked") }) {
            self.body = Self.dechunk(remainder)
        } else {
            self.body = remainder
        }
    }

    func header(_ name: String) -> String? {
        headers.first { $0.name == name.lowercased() }?.value
    }

    func headerValues(_ name: String) -> [String] {
        headers.filter { $0.name == name.lowercased() }.map(\.value)
    }

    var bodyText: String { String(decoding: body ?? [], as: UTF8.self) }

    /// The body parsed as a JSON object.
    var json: [String: Any]? {
        guard let body, let object = try? JSONSerialization.jsonObject(with: Data(body)) else { return nil }
        return object as? [String: Any]
    }

    static func headerEnd(_ bytes: [UInt8]) -> Int? {
        guard bytes.count >= 4 else { return nil }
        for index in 0...(bytes.count - 4)
        where bytes[index] == 13 && bytes[index + 1] == 10 && bytes[index + 2] == 13 && bytes[index + 3] == 10 {
            return index
        }
        return nil
    }

    static func dechunk(_ bytes: [UInt8]) -> [UInt8]? {
        var result: [UInt8] = []
        var position = 0
        while true {
            guard let lineEnd = (position..<max(position, bytes.count - 1)).first(where: { bytes[$0] == 13 && bytes[$0 + 1] == 10 }) else {
                return nil
            }
            let sizeText = String(decoding: bytes[position..<lineEnd], as: UTF8.self).split(separator: ";").first ?? ""
            guard let size = Int(sizeText.trimmingCharacters(in: .whitespaces), radix: 16) else { return nil }
            position = lineEnd + 2
            if size == 0 { return result }
            guard bytes.count >= position + size + 2 else { return nil }
            result += bytes[position..<(position + size)]
            position += size + 2
        }
    }

    /// Whether `bytes` hold one complete response (by Content-Length, or a final chunk).
    static func isComplete(_ bytes: [UInt8]) -> Bool {
        guard let response = ParsedResponse(bytes), let end = headerEnd(bytes) else { return false }
        if let length = response.header("content-length").flatMap(Int.init) {
            // Interim responses make `end` point at the first head; compare against the final body.
            return response.rawBody.count >= length && bytes.count >= end + 4 + length
        }
        if response.header("transfer-encoding")?.lowercased().contains("chunked") == true {
            return response.body != nil
        }
        return [204, 304].contains(response.status)
    }
}

/// A deliberately dumb HTTP client over a POSIX socket: it sends exactly the bytes it is given
/// and records exactly the bytes it gets back, so tests can check the server at the socket level.
/// Blocking I/O runs on a Dispatch queue, off Swift's cooperative pool.
enum RawHTTPClient {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// Connects to `host:port`, sends `request`, then reads until the server closes or resets,
    /// until `timeout` passes without data, or (with `stopWhenComplete`) until one whole
    /// response has arrived. With `halfClose`, the client shuts its sending side down after
    /// the request, so the server sees EOF.
    static func exchange(
        host: String = "127.0.0.1",
        port: Int,
        request: [UInt8],
        timeout: Double = 5,
        stopWhenComplete: Bool = false,
        halfClose: Bool = false
    ) async throws -> RawExchange {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(
                    with: Result {
                        let socket = try connect(host: host, port: port, timeout: timeout)
                        defer { close(socket) }
                        try sendAll(socket, request)
                        if halfClose { shutdown(socket, Int32(SHUT_WR)) }
                        return try readAll(socket, stopWhenComplete: stopWhenComplete)
                    }
                )
            }
        }
    }

    /// `exchange` for a request given as text (CRLFs included by the caller).
    static func exchange(host: String = "127.0.0.1", port: Int, _ request: String, timeout: Double = 5) async throws -> RawExchange {
        try await exchange(host: host, port: port, request: Array(request.utf8), timeout: timeout)
    }

    /// Opens a connection with send and receive timeouts.
    static func connect(host: String, port: Int, timeout: Double) throws -> Int32 {
        let isIPv6 = host.contains(":")
        let fd = socket(isIPv6 ? AF_INET6 : AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket: \(errno)") }
        var time = timeval(tv_sec: Int(timeout), tv_usec: Int32((timeout - Double(Int(timeout))) * 1_000_000).asSuseconds)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
        let result: Int32
        if isIPv6 {
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_port = in_port_t(UInt16(port).bigEndian)
            inet_pton(AF_INET6, host, &address.sin6_addr)
            result = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { systemConnect(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) }
            }
        } else {
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            inet_pton(AF_INET, host, &address.sin_addr)
            result = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { systemConnect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
        }
        guard result == 0 else {
            let error = errno
            close(fd)
            throw Failure(description: "connect: \(error)")
        }
        return fd
    }

    static func sendAll(_ fd: Int32, _ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard sent > 0 else { throw Failure(description: "send: \(errno)") }
            offset += sent
        }
    }

    static func readAll(_ fd: Int32, stopWhenComplete: Bool) throws -> RawExchange {
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count > 0 {
                received += buffer[0..<count]
                if stopWhenComplete, ParsedResponse.isComplete(received) {
                    return RawExchange(bytes: received, end: .complete)
                }
            } else if count == 0 {
                return RawExchange(bytes: received, end: .closed)
            } else if errno == ECONNRESET {
                return RawExchange(bytes: received, end: .reset)
            } else if errno == EAGAIN || errno == EWOULDBLOCK {
                return RawExchange(bytes: received, end: .timedOut)
            } else if errno != EINTR {
                throw Failure(description: "recv: \(errno)")
            }
        }
    }
}

extension Int32 {
    fileprivate var asSuseconds: Int { Int(self) }
}
