import Foundation
import Synchronization

/// A one-line progress bar (bytes, percentage, rate) redrawn in place on a terminal. When the
/// output is not a terminal nothing is drawn while the transfer runs (a pipe or a log file
/// would fill with redraws) and ``finish()`` prints one final line.
final class ProgressLine: Sendable {
    private struct State {
        var lastDraw = Date.distantPast
        var latest: Int64 = 0
        var done = false
    }

    /// Erases what is left of a longer previous drawing.
    private static let clearToEndOfLine = "\u{1B}[K"

    private let total: Int64
    private let start = Date()
    private let isTerminal = isatty(STDOUT_FILENO) == 1
    private let state = Mutex(State())
    private let output: DemoOutput

    init(total: Int64, output: DemoOutput) {
        self.total = total
        self.output = output
    }

    /// Reports `done` bytes so far (any thread).
    func update(_ done: Int64) {
        let now = Date()
        let line: String? = state.withLock { state in
            guard !state.done else { return nil }
            state.latest = max(state.latest, done)
            guard isTerminal else { return nil }
            guard now.timeIntervalSince(state.lastDraw) > 0.05 || done == total else { return nil }
            state.lastDraw = now
            return "\r    " + render(state.latest, now: now) + Self.clearToEndOfLine
        }
        if let line {
            StandardStreams.writeOutput(Data(line.utf8))
        }
    }

    /// Ends the bar: redraws it at its final value and ends the line. Off a terminal this
    /// prints the single summary line. Calls after the first do nothing.
    func finish() {
        let now = Date()
        let line: String? = state.withLock { state in
            guard !state.done else { return nil }
            state.done = true
            return isTerminal
                ? "\r    " + render(state.latest, now: now) + Self.clearToEndOfLine + "\n"
                : "    " + render(state.latest, now: now) + "\n"
        }
        if let line {
            StandardStreams.writeOutput(Data(line.utf8))
        }
    }

    private func render(_ done: Int64, now: Date) -> String {
        let width = 30
        let fraction = total > 0 ? min(1, Double(done) / Double(total)) : 1
        let filled = Int(fraction * Double(width))
        let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled)
        let elapsed = max(now.timeIntervalSince(start), 0.001)
        let rate = Double(done) / elapsed / 1_048_576
        return String(
            format: "[%@] %3.0f%%  %.1f/%.1f MiB  %.0f MiB/s",
            bar, fraction * 100, Double(done) / 1_048_576, Double(total) / 1_048_576, rate
        )
    }
}
