import Foundation

/// `-w/--write-out FORMAT`, as curl reads it: text with `%{variable}` replaced by a value of
/// the call, `%%` for a percent sign, and the escapes `\n`, `\r`, `\t` and `\\`. The variables
/// are curl's that apply to Courier's calls; an unknown one is a usage error (curl warns and
/// prints nothing in its place, which hides a typo in a script).
struct WriteOutFormat: Equatable {
    /// One piece of the format: text as it is, or a variable to fill in.
    enum Piece: Equatable {
        case text(String)
        case variable(Variable)
    }

    /// The variables, named as curl names them.
    enum Variable: String, CaseIterable {
        case httpCode = "http_code"
        case responseCode = "response_code"
        case timeNamelookup = "time_namelookup"
        case timeConnect = "time_connect"
        case timeAppconnect = "time_appconnect"
        case timeStarttransfer = "time_starttransfer"
        case timeTotal = "time_total"
        case sizeDownload = "size_download"
        case remoteIP = "remote_ip"
        case remotePort = "remote_port"
        case httpVersion = "http_version"
        case numRedirects = "num_redirects"
        case urlEffective = "url_effective"
    }

    /// A format that cannot be read.
    struct Invalid: Error, CustomStringConvertible {
        let description: String
    }

    let pieces: [Piece]

    /// Reads `format`; throws ``Invalid`` naming an unknown variable or an unclosed `%{`.
    init(_ format: String) throws(Invalid) {
        var pieces: [Piece] = []
        var text = ""
        var rest = Substring(format)
        while let character = rest.first {
            rest = rest.dropFirst()
            switch character {
            case "\\":
                guard let next = rest.first else {
                    text.append("\\")
                    continue
                }
                let escapes: [Character: String] = ["n": "\n", "r": "\r", "t": "\t", "\\": "\\"]
                if let escaped = escapes[next] {
                    text += escaped
                    rest = rest.dropFirst()
                } else {
                    text.append("\\")
                }
            case "%":
                if rest.first == "%" {
                    text.append("%")
                    rest = rest.dropFirst()
                } else if rest.first == "{" {
                    guard let close = rest.firstIndex(of: "}") else {
                        throw Invalid(description: "--write-out: '%{' without a closing '}'")
                    }
                    let name = String(rest[rest.index(after: rest.startIndex)..<close])
                    guard let variable = Variable(rawValue: name) else {
                        let known = Variable.allCases.map(\.rawValue).joined(separator: ", ")
                        throw Invalid(description: "--write-out: unknown variable '\(name)' (known: \(known))")
                    }
                    if !text.isEmpty { pieces.append(.text(text)) }
                    text = ""
                    pieces.append(.variable(variable))
                    rest = rest[rest.index(after: close)...]
                } else {
                    text.append("%")
                }
            default:
                text.append(character)
            }
        }
        if !text.isEmpty { pieces.append(.text(text)) }
        self.pieces = pieces
    }

    /// The format with every variable replaced by its value in `values`.
    func render(_ values: [Variable: String]) -> String {
        pieces.map { piece in
            switch piece {
            case .text(let text): text
            case .variable(let variable): values[variable] ?? ""
            }
        }.joined()
    }
}
