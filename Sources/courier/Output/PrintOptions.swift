/// What `--print` / `--verbose` / `--pretty` ask to show, decided once from the options and
/// whether stdout is a terminal.
struct PrintOptions: Equatable {
    /// `H`: the request's head.
    var requestHeaders = false
    /// `B`: the request's body.
    var requestBody = false
    /// `h`: the response's head.
    var responseHeaders = false
    /// `b`: the response's body.
    var responseBody = true
    /// ANSI colours (`--pretty all|colors`).
    var colors = false
    /// JSON indentation (`--pretty all|format`).
    var format = false
    /// Whether stdout is a terminal: binary bodies are replaced by a note there.
    var isTerminal = false

    /// Parses HTTPie's `--print` letters.
    /// - Throws: ``RequestBuildError`` for a letter outside `HBhb`.
    mutating func setPrint(_ letters: String) throws {
        guard !letters.isEmpty, letters.allSatisfy({ "HBhb".contains($0) }) else {
            throw RequestBuildError(
                description: "--print takes letters among H (request headers), B (request body), "
                    + "h (response headers), b (response body); got '\(letters)'")
        }
        requestHeaders = letters.contains("H")
        requestBody = letters.contains("B")
        responseHeaders = letters.contains("h")
        responseBody = letters.contains("b")
    }
}
