#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A listening IPv4 socket on 127.0.0.1 (an ephemeral port) with a 64 KiB receive buffer, for
/// tests where a peer that does not read must make the engine's writes stop soon.
enum SmallBufferListenerSocket {
    /// Opens, binds and listens; the caller owns (and closes) the descriptor.
    static func open() throws -> (descriptor: Int32, port: Int) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw EngineTestFailure("socket failed") }
        var size: Int32 = 64 * 1024
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        guard bound == 0, listen(fd, 4) == 0,
            withUnsafeMutablePointer(to: &address, {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
            }) == 0
        else {
            close(fd)
            throw EngineTestFailure("bind/listen failed")
        }
        return (fd, Int(UInt16(bigEndian: address.sin_port)))
    }
}
