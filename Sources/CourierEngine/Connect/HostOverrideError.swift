/// Why a ``ResolveOverride`` or ``ConnectToOverride`` could not be made: the text (or
/// values) given, what is wrong with them, and the form expected (curl's syntax).
public struct HostOverrideError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The text parsed, or the values given, as written.
    public let input: String
    /// What is wrong, e.g. "the port 'http' is not a number from 1 to 65535".
    public let reason: String
    /// The form expected: `HOST:PORT:ADDRESS[,ADDRESS]...` or `HOST1:PORT1:HOST2:PORT2`.
    public let expectedForm: String

    /// An error for `input`, saying what is wrong (`reason`) and what was expected.
    public init(input: String, reason: String, expectedForm: String) {
        self.input = input
        self.reason = reason
        self.expectedForm = expectedForm
    }

    /// "'INPUT': REASON (expected FORM)".
    public var description: String { "'\(input)': \(reason) (expected \(expectedForm))" }
}

/// The pieces both override syntaxes share: ports and hosts, IPv6 literals in brackets.
enum HostOverrideSyntax {
    /// A port, 1 to 65535, or nil (``portProblem(_:)`` says why).
    static func port(_ text: Substring) -> Int? {
        guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }), let port = Int(text),
            (1...65535).contains(port)
        else { return nil }
        return port
    }

    /// Why `text` is not a port.
    static func portProblem(_ text: Substring) -> String {
        "the port '\(text)' is not a number from 1 to 65535"
    }

    /// Why `host` can't be a host name or IP literal (nil when it can): empty, or holding
    /// white space, a control character, a slash, `@` or `:` (outside an IPv6 literal).
    static func problem(withHost host: String) -> String? {
        if host.isEmpty { return "the host is empty" }
        if IPAddressBytes(host) != nil { return nil }
        if host.unicodeScalars.contains(where: { $0.value <= 0x20 || $0.value == 0x7F || "/@:[]".unicodeScalars.contains($0) }) {
            return "the host '\(host)' is not a host name or IP address"
        }
        return nil
    }

    /// Splits `text` at the colons that separate fields, keeping `[…]` (an IPv6 literal)
    /// whole; the brackets are removed from a field that is one bracketed literal.
    static func fields(_ text: String) -> [Substring]? {
        var fields: [Substring] = []
        var start = text.startIndex
        var index = text.startIndex
        var inBrackets = false
        while index < text.endIndex {
            let character = text[index]
            if character == "[" {
                guard !inBrackets else { return nil }
                inBrackets = true
            } else if character == "]" {
                guard inBrackets else { return nil }
                inBrackets = false
            } else if character == ":", !inBrackets {
                fields.append(text[start..<index])
                start = text.index(after: index)
            }
            index = text.index(after: index)
        }
        guard !inBrackets else { return nil }
        fields.append(text[start...])
        return fields
    }

    /// `field` without the brackets of an IPv6 literal (`[::1]` → `::1`).
    static func unbracketed(_ field: Substring) -> String {
        if field.hasPrefix("["), field.hasSuffix("]"), field.count >= 2 {
            return String(field.dropFirst().dropLast())
        }
        return String(field)
    }
}
