import Foundation

/// Tells whether anything opened a path while it was watched (Linux inotify, `IN_OPEN`). Test
/// support for "refused without opening": opening a FIFO releases a writer blocked on it, and
/// opening some devices acts on them, so code that checks a path must learn what it names
/// before it opens it. inotify queues the event in the `open` call itself, so once the code
/// under test has returned, ``wasOpened()`` answers without any wait.
///
/// Linux only: elsewhere ``init(path:)`` returns nil.
public final class PathOpenProbe: Sendable {
    private let descriptor: Int32

    /// Starts watching `path` (which must exist), or nil when inotify is not available.
    public init?(path: String) {
        #if os(Linux)
        let descriptor = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard descriptor >= 0 else { return nil }
        guard inotify_add_watch(descriptor, path, UInt32(IN_OPEN)) >= 0 else {
            close(descriptor)
            return nil
        }
        self.descriptor = descriptor
        #else
        return nil
        #endif
    }

    deinit {
        close(descriptor)
    }

    /// Whether the path was opened since the watch started (or since the last call).
    public func wasOpened() -> Bool {
        var buffer = [UInt8](repeating: 0, count: 4096)
        return read(descriptor, &buffer, buffer.count) > 0
    }
}
