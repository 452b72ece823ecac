import Foundation

/// Prints the demo's steps readably: numbered titles, indented details, confirmations and
/// failures marked. Titles are bold on a terminal and plain when stdout is a pipe.
final class DemoOutput: Sendable {
    private let counter = LockedCounter()
    private let isTerminal = isatty(STDOUT_FILENO) == 1

    func title(_ text: String) {
        write("\n\(bold(text))\n")
    }

    func step(_ name: String) {
        let number = counter.increment()
        write("\n\(bold("[\(number)] \(name)"))\n")
    }

    func detail(_ text: String) {
        write("    \(text)\n")
    }

    /// A check that passed: what was verified.
    func ok(_ text: String) {
        write("    \(isTerminal ? "\u{1B}[32m✓\u{1B}[0m" : "✓") \(text)\n")
    }

    func failure(_ text: String) {
        write("    \(isTerminal ? "\u{1B}[31m✗ FAILED:\u{1B}[0m" : "✗ FAILED:") \(text)\n")
    }

    /// Writes straight to the file descriptor, so lines and the progress bar (which also
    /// writes unbuffered) keep their order when stdout is a pipe.
    func write(_ text: String) {
        StandardStreams.writeOutput(Data(text.utf8))
    }

    private func bold(_ text: String) -> String {
        isTerminal ? "\u{1B}[1m\(text)\u{1B}[0m" : text
    }
}
