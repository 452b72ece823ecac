import Foundation

/// Prints the demo's steps readably: numbered titles, indented details, failures marked.
final class DemoOutput: Sendable {
    private let counter = StepCounter()

    func title(_ text: String) {
        write("\n\(text)\n")
    }

    func step(_ name: String) {
        let number = counter.next()
        write("\n[\(number)] \(name)\n")
    }

    func detail(_ text: String) {
        write("    \(text)\n")
    }

    func failure(_ text: String) {
        write("    FAILED: \(text)\n")
    }

    /// Writes straight to the file descriptor, so lines and the progress bar (which also
    /// writes unbuffered) keep their order when stdout is a pipe.
    func write(_ text: String) {
        FileHandle.standardOutput.write(Data(text.utf8))
    }
}

private final class StepCounter: Sendable {
    private let value = LockedCounter()
    func next() -> Int { value.increment() }
}
