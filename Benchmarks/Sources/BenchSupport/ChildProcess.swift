import Foundation
import Synchronization

/// The path of the running executable, to start children of the same binary.
public var currentExecutablePath: String {
    (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
}

/// Runs `executable arguments`, returns its stdout and exit status; stderr passes through.
/// Kills it (SIGKILL) after `killAfter` seconds.
public func spawnChild(_ executable: String, _ arguments: [String], killAfter: Double) async -> (Data, Int32) {
    await withCheckedContinuation { (continuation: CheckedContinuation<(Data, Int32), Never>) in
        Thread.detachNewThread {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: executable)
            process.arguments = arguments
            let pipe = Pipe()
            process.standardOutput = pipe
            do {
                try process.run()
            } catch {
                continuation.resume(returning: (Data("cannot start \(executable): \(error)".utf8), -1))
                return
            }
            let pid = process.processIdentifier
            let finished = Flag()
            DispatchQueue.global().asyncAfter(deadline: .now() + killAfter) {
                if !finished.value.load(ordering: .acquiring) { kill(pid, SIGKILL) }
            }
            let data = pipe.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            finished.value.store(true, ordering: .releasing)
            continuation.resume(returning: (data, process.terminationStatus))
        }
    }
}

/// A flag set once from one thread and read from another.
final class Flag: Sendable {
    let value = Atomic<Bool>(false)
}

/// Runs a child of this executable that prints its report as the last line of its stdout,
/// as JSON, and decodes that line.
///
/// - Parameters:
///   - type: The report's type.
///   - arguments: The child's arguments.
///   - killAfter: Seconds after which the child is killed (SIGKILL).
/// - Returns: The report, or nil when the last line is not one; and what went wrong with the
///   child itself: no report, or a non-zero exit status.
public func runChildReport<Report: Decodable>(
    _ type: Report.Type,
    _ arguments: [String],
    killAfter: Double
) async -> (report: Report?, problems: [String]) {
    let (output, status) = await spawnChild(currentExecutablePath, arguments, killAfter: killAfter)
    let lastLine = String(decoding: output, as: UTF8.self).split(separator: "\n").last.map(String.init) ?? ""
    guard let report = try? JSONDecoder().decode(Report.self, from: Data(lastLine.utf8)) else {
        return (nil, ["the child exited with status \(status) and no report; its stdout ended: \(lastLine.suffix(300))"])
    }
    return (report, status == 0 ? [] : ["the child exited with status \(status)"])
}
