import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A loopback port that refuses connections for as long as this value lives: a TCP socket is
/// bound to it but never listens, so a connection attempt gets a reset (ECONNREFUSED), and no
/// server of a test running in parallel can take the port meanwhile (a port that was merely
/// free a moment ago can be: a flaky "closed port" test did exactly that).
final class RefusingPort {
    let port: Int
    private let descriptor: Int32

    init() throws {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw CLITestFailure("socket() failed: errno \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) == 0 && getsockname(descriptor, $0, &length) == 0 }
        }
        guard bound else {
            close(descriptor)
            throw CLITestFailure("bind() failed: errno \(errno)")
        }
        self.descriptor = descriptor
        self.port = Int(UInt16(bigEndian: address.sin_port))
    }

    /// `http://127.0.0.1:PORT`.
    var baseURL: String { "http://127.0.0.1:\(port)" }

    deinit { close(descriptor) }
}
