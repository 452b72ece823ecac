import CourierTestServer
import Foundation
import Testing

extension TestServer {
    /// Sends one request with `Connection: close` and parses the response.
    func request(
        _ target: String,
        method: String = "GET",
        headers: [(String, String)] = [],
        body: [UInt8]? = nil,
        timeout: Double = 10
    ) async throws -> ParsedResponse {
        let exchange = try await self.exchange(target, method: method, headers: headers, body: body, timeout: timeout)
        guard let response = exchange.response else {
            throw RawHTTPClient.Failure(description: "no response to \(method) \(target): \(exchange.text.prefix(200))")
        }
        return response
    }

    /// Sends one request with `Connection: close` and returns the raw exchange.
    func exchange(
        _ target: String,
        method: String = "GET",
        headers: [(String, String)] = [],
        body: [UInt8]? = nil,
        timeout: Double = 10
    ) async throws -> RawExchange {
        var head = "\(method) \(target) HTTP/1.1\r\nHost: \(self.authority)\r\nConnection: close\r\n"
        for (name, value) in headers {
            head += "\(name): \(value)\r\n"
        }
        if let body, !headers.contains(where: { $0.0.lowercased() == "content-length" || $0.0.lowercased() == "transfer-encoding" }) {
            head += "Content-Length: \(body.count)\r\n"
        }
        head += "\r\n"
        return try await RawHTTPClient.exchange(
            host: self.host,
            port: self.port,
            request: Array(head.utf8) + (body ?? []),
            timeout: timeout
        )
    }

    /// `127.0.0.1:PORT` or `[::1]:PORT`.
    var authority: String {
        host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }
}

extension ParsedResponse {
    /// The JSON body's `key` as a dictionary.
    func object(_ key: String) -> [String: Any]? {
        json?[key] as? [String: Any]
    }

    /// The JSON body's `key` as a string.
    func string(_ key: String) -> String? {
        json?[key] as? String
    }
}
