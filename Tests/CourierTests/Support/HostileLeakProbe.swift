import CourierTestServer
import Foundation
import Synchronization

/// What a finished hostile case may have left behind in this process: descriptors, client
/// sockets to one server port, download temporary files. Reads /proc (Linux).
enum HostileLeakProbe {
    /// Entries in /proc/self/fd (this process's open descriptors).
    static func openDescriptorCount() -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? 0
    }

    /// This process's descriptors that are TCP sockets whose peer is `127.0.0.1:port` (client
    /// ends of connections to a test server). ``ClientSocketProbe`` reads the whole /proc tables
    /// (this probe used `String(contentsOfFile:)`, which stops at 4 KiB there, so with a large
    /// table it found nothing and the check passed whatever was left open).
    static func clientSockets(toPort port: Int) -> Int {
        ClientSocketProbe.sockets(toPort: port)
    }

    /// The download temporary files (`CourierDownload-*`) in the temporary directory.
    static func downloadTemporaryFiles() -> Set<String> {
        let directory = FileManager.default.temporaryDirectory.path
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return Set(names.filter { $0.hasPrefix("CourierDownload-") }.map { directory + "/" + $0 })
    }
}

/// One task's completions, from any shape of completion handler: how many, and the first error.
final class HostileCompletions: Sendable {
    private struct State {
        var count = 0
        var error: (any Error)?
        var succeeded = false
    }

    private let state = Mutex(State())

    func record(_ error: (any Error)?) {
        state.withLock { state in
            state.count += 1
            if state.count == 1 {
                state.error = error
                state.succeeded = error == nil
            }
        }
    }

    var count: Int { state.withLock { $0.count } }
    var error: (any Error)? { state.withLock { $0.error } }

    /// Polls until the first completion, for up to `seconds` (a hang bound); `false` if none came.
    func wait(upTo seconds: Double) async -> Bool {
        let deadline = ContinuousClock.now + .milliseconds(Int64(seconds * 1000))
        while ContinuousClock.now < deadline {
            if count > 0 { return true }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return count > 0
    }
}
