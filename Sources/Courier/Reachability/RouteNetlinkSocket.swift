#if os(Linux)
import Glibc

/// A `NETLINK_ROUTE` socket: the thin layer of system calls under the monitor. Everything it
/// sends and reads goes through ``NetlinkCodec``.
final class RouteNetlinkSocket {
    /// A system call failed: which, and `errno`.
    struct Failure: Error, CustomStringConvertible {
        var call: String
        var code: Int32
        var description: String { "\(call) failed: \(String(cString: strerror(code))) (errno \(code))" }
    }

    let descriptor: Int32
    private var isClosed = false

    /// Opens a socket subscribed to `groups` (``RouteNetlink`` group bits; 0 for a socket that
    /// only sends requests and reads their replies), close-on-exec, with a receive buffer of
    /// `receiveBuffer` bytes.
    init(groups: UInt32, receiveBuffer: Int32) throws(Failure) {
        let fd = socket(
            RouteNetlink.addressFamily, Int32(SOCK_RAW.rawValue) | Int32(SOCK_CLOEXEC.rawValue),
            RouteNetlink.protocolRoute)
        guard fd >= 0 else { throw Failure(call: "socket(AF_NETLINK, NETLINK_ROUTE)", code: errno) }
        var size = receiveBuffer
        _ = setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        // struct sockaddr_nl: family (u16), pad (u16), pid (u32, 0: the kernel picks), groups (u32).
        var address = [UInt8](repeating: 0, count: 12)
        withUnsafeBytes(of: UInt16(RouteNetlink.addressFamily)) { address.replaceSubrange(0..<2, with: $0) }
        withUnsafeBytes(of: groups) { address.replaceSubrange(8..<12, with: $0) }
        let bound = address.withUnsafeBytes { raw in
            bind(fd, raw.baseAddress?.assumingMemoryBound(to: sockaddr.self), socklen_t(raw.count))
        }
        guard bound == 0 else {
            let code = errno
            Glibc.close(fd)
            throw Failure(call: "bind(NETLINK_ROUTE groups \(groups))", code: code)
        }
        descriptor = fd
    }

    deinit { close() }

    func close() {
        guard !isClosed else { return }
        isClosed = true
        _ = Glibc.close(descriptor)
    }

    /// Gives up on a reply after `seconds` (a request whose reply never comes; the kernel always
    /// answers, so this is only a guard).
    func setReceiveTimeout(seconds: Int) {
        var limit = timeval(tv_sec: seconds, tv_usec: 0)
        _ = setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
    }

    /// Sends one request to the kernel.
    func send(_ bytes: [UInt8]) throws(Failure) {
        // struct sockaddr_nl for the kernel: family AF_NETLINK, pid 0, groups 0.
        var kernel = [UInt8](repeating: 0, count: 12)
        withUnsafeBytes(of: UInt16(RouteNetlink.addressFamily)) { kernel.replaceSubrange(0..<2, with: $0) }
        while true {
            let sent = bytes.withUnsafeBytes { payload in
                kernel.withUnsafeBytes { address in
                    sendto(
                        descriptor, payload.baseAddress, payload.count, 0,
                        address.baseAddress?.assumingMemoryBound(to: sockaddr.self), socklen_t(address.count))
                }
            }
            if sent >= 0 { return }
            if errno == EINTR { continue }
            throw Failure(call: "sendto(NETLINK_ROUTE)", code: errno)
        }
    }

    /// What one `recv` gave.
    enum Received {
        case datagram([UInt8])
        /// Nothing queued (non-blocking read) or the receive timeout passed.
        case wouldBlock
        /// The kernel dropped events because the buffer was full (`ENOBUFS`): state must be
        /// read afresh.
        case overrun
    }

    /// Reads one datagram; `blocking: false` returns ``Received/wouldBlock`` when none is queued.
    func receive(blocking: Bool) throws(Failure) -> Received {
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = buffer.withUnsafeMutableBytes { raw in
                recv(descriptor, raw.baseAddress, raw.count, blocking ? 0 : Int32(MSG_DONTWAIT))
            }
            if count >= 0 { return .datagram(Array(buffer[0..<count])) }
            switch errno {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK: return .wouldBlock
            case ENOBUFS: return .overrun
            default: throw Failure(call: "recv(NETLINK_ROUTE)", code: errno)
            }
        }
    }
}
#endif
