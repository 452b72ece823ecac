import Foundation

/// Reads a password from the terminal without echoing it (`--auth user` on a terminal).
enum PasswordPrompt {
    /// The typed password, or nil when the terminal can't be read.
    static func read(_ prompt: String) -> String? {
        StandardStreams.writeError(Data(prompt.utf8))
        var saved = termios()
        let canHide = tcgetattr(STDIN_FILENO, &saved) == 0
        if canHide {
            var silent = saved
            silent.c_lflag &= ~tcflag_t(ECHO)
            tcsetattr(STDIN_FILENO, TCSANOW, &silent)
        }
        defer {
            if canHide { tcsetattr(STDIN_FILENO, TCSANOW, &saved) }
            StandardStreams.writeError(Data("\n".utf8))
        }
        return readLine(strippingNewline: true)
    }
}
