import Foundation

/// A blocking one-shot HTTP/1.1 GET over a POSIX socket (`Connection: close`, read to EOF),
/// for the parent's probes and nginx's stub_status. No client under test is involved, so the
/// parent process stays free of their threads and pools.
enum PlainHTTP {
    struct Response {
        var status: Int
        var headers: [String: String]
        var body: Data
    }

    static func get(_ url: URL, method: String = "GET", limit: Int = 1 << 20) -> Response? {
        guard let host = url.host, let port = url.port ?? (url.scheme == "http" ? 80 : nil) else { return nil }
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        guard inet_pton(AF_INET, host == "localhost" ? "127.0.0.1" : host, &address.sin_addr) == 1 else { return nil }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else { return nil }
        let path = url.path.isEmpty ? "/" : url.path
        let query = url.query.map { "?\($0)" } ?? ""
        let request = Array("\(method) \(path)\(query) HTTP/1.1\r\nHost: \(host):\(port)\r\nConnection: close\r\n\r\n".utf8)
        guard request.withUnsafeBytes({ send(fd, $0.baseAddress, $0.count, 0) }) == request.count else { return nil }
        var received = Data()
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while received.count < limit {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count <= 0 { break }
            received.append(contentsOf: buffer[0..<count])
        }
        guard let split = received.range(of: Data("\r\n\r\n".utf8)) else { return nil }
        let headText = String(decoding: received[..<split.lowerBound], as: UTF8.self)
        var lines = headText.components(separatedBy: "\r\n")
        let statusLine = lines.removeFirst().split(separator: " ")
        guard statusLine.count >= 2, let status = Int(statusLine[1]) else { return nil }
        var headers: [String: String] = [:]
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return Response(status: status, headers: headers, body: Data(received[split.upperBound...]))
    }

    /// nginx stub_status "accepts": TCP connections accepted since start (this request's own
    /// connection included).
    static func nginxAccepts(base: URL) -> Int? {
        guard let response = get(base.appendingPathComponent("nginx_status")), response.status == 200 else { return nil }
        let lines = String(decoding: response.body, as: UTF8.self).split(separator: "\n")
        guard let index = lines.firstIndex(where: { $0.contains("accepts") }), index + 1 < lines.count else { return nil }
        return lines[index + 1].split(separator: " ").first.flatMap { Int($0) }
    }
}
