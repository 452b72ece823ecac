import Foundation

/// Counts this process's TCP sockets connected to a loopback port (the client ends of
/// connections to a test server), matching /proc/self/net/tcp{,6} entries to /proc/self/fd by
/// inode. Linux only (elsewhere it reports -1).
///
/// The /proc tables are read with `FileHandle` up to end of file: they report a size of 0, and
/// `String(contentsOfFile:)` on Linux trusts the size and reads nothing.
enum ClientSocketProbe {
    static func sockets(toPort port: Int) -> Int {
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
