#if os(Linux)
import Glibc

/// Moves the calling thread into another network namespace: the hook that lets a test's
/// monitor watch a namespace the test made, while the rest of the process stays where it is.
/// Namespaces are per thread, and a socket keeps the namespace it was opened in.
enum NetworkNamespace {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    private static let cloneNewNet: Int32 = 0x4000_0000  // CLONE_NEWNET

    /// Joins the network namespace at `path` (for example `/run/netns/NAME`) on this thread.
    static func enter(_ path: String) throws(Failure) {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            throw Failure(description: "cannot open the network namespace \(path): \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }
        // Glibc's Swift module does not declare setns(2); look the function up in libc.
        typealias SetNamespace = @convention(c) (Int32, Int32) -> Int32
        guard let symbol = dlsym(nil, "setns") else {
            throw Failure(description: "setns(2) is not available in this C library")
        }
        let setNamespace = unsafeBitCast(symbol, to: SetNamespace.self)
        guard setNamespace(fd, cloneNewNet) == 0 else {
            throw Failure(
                description: "cannot enter the network namespace \(path): \(String(cString: strerror(errno))) "
                    + "(setns needs CAP_SYS_ADMIN)")
        }
    }
}
#endif
