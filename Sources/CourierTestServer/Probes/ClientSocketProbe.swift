import Foundation

/// Counts this process's TCP sockets connected to a loopback port (the client ends of
/// connections to a test server), matching /proc/self/net/tcp{,6} entries to /proc/self/fd by
/// inode. Test support for leak checks: every test target that imports `CourierTestServer`
/// shares this one probe.
///
/// The /proc tables are read with `FileHandle` up to end of file: they report a size of 0, and
/// `String(contentsOfFile:)` on Linux trusts the size and reads nothing.
public enum ClientSocketProbe {
    /// The number of this process's open descriptors that are TCP sockets whose remote port is
    /// `port` (IPv4 or IPv6), counted now from /proc.
    ///
    /// Reads /proc synchronously; safe from any thread. Linux only: elsewhere it returns -1. A
    /// /proc table that cannot be read counts as empty (so the result may be 0), never an error.
    /// - Parameter port: the server's port (the remote end of the sockets to count).
    /// - Returns: how many of this process's descriptors are such sockets (0 when none).
    public static func sockets(toPort port: Int) -> Int {
        #if os(Linux)
        var inodes = Set<Substring>()
        for table in ["/proc/self/net/tcp", "/proc/self/net/tcp6"] {
            guard let handle = FileHandle(forReadingAtPath: table) else { continue }
            defer { try? handle.close() }
            guard let data = try? handle.readToEnd() else { continue }
            let text = String(decoding: data, as: UTF8.self)
            for line in text.split(separator: "\n").dropFirst() {
                let fields = line.split(separator: " ", omittingEmptySubsequences: true)
                // sl, local, remote, state, queues, timer, retransmits, uid, timeout, inode
                guard fields.count > 9, let remotePort = fields[2].split(separator: ":").last,
                    Int(remotePort, radix: 16) == port, fields[9] != "0"
                else { continue }
                inodes.insert(fields[9])
            }
        }
        guard !inodes.isEmpty, let fds = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") else { return 0 }
        return fds.filter { fd in
            guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(fd)"),
                target.hasPrefix("socket:[")
            else { return false }
            return inodes.contains(target.dropFirst("socket:[".count).dropLast())
        }.count
        #else
        return -1
        #endif
    }
}
