import Foundation

/// The name `--download` gives a file in the current directory when no `-o` is given: one plain
/// file name, never a path. Pure.
///
/// A URL's last path component comes percent-decoded (`..%2F..%2Fx` is `../../x`), and a
/// server's `Content-Disposition` says what it likes, so a name is cut to what follows its last
/// `/`, control and invisible format characters become `_` (a name is printed to the terminal:
/// `Saved to …`; a bidirectional override can disguise it), and it is cut to ``maximumLength``
/// UTF-8 bytes. A name the server chose loses its leading dots, as HTTPie's does (`.bashrc` is
/// saved as `bashrc`): a server can't plant a dotfile.
enum DownloadFileName {
    /// The longest name kept, in UTF-8 bytes: room for `-N` under the 255 bytes a file name has.
    static let maximumLength = 200

    /// The name for a download: from `disposition` (a `Content-Disposition` value) when it
    /// gives a usable `filename=`, else from `lastPathComponent` (the request URL's, decoded),
    /// else `index`.
    static func name(disposition: String?, lastPathComponent: String?) -> String {
        if let disposition, let range = disposition.range(of: "filename=") {
            var name = String(disposition[range.upperBound...])
            if let end = name.firstIndex(of: ";") { name = String(name[..<end]) }
            name = name.trimmingCharacters(in: CharacterSet(charactersIn: "\" "))
            if let safe = plain(name, droppingLeadingDots: true) { return safe }
        }
        return lastPathComponent.flatMap { plain($0, droppingLeadingDots: false) } ?? "index"
    }

    /// `text` as one file name, or nil when nothing usable is left (empty, `.` or `..`).
    /// The '/' cut and the dots dropped are Unicode scalars: a combining mark after one makes
    /// a Character that is no "/" or "." but still writes that byte.
    static func plain(_ text: String, droppingLeadingDots: Bool) -> String? {
        var scalars = Substring(text).unicodeScalars
        if let slash = scalars.lastIndex(of: "/") { scalars = scalars[scalars.index(after: slash)...] }
        scalars = scalars.drop { $0 == " " }
        if droppingLeadingDots { scalars = scalars.drop { $0 == "." || $0 == " " } }
        let name = String(String.UnicodeScalarView(scalars))
        var cleaned = ""
        var length = 0
        for character in name {
            let safe: Character = character.unicodeScalars.contains(where: isHidden) ? "_" : character
            length += safe.utf8.count
            guard length <= maximumLength else { break }
            cleaned.append(safe)
        }
        guard !cleaned.isEmpty, cleaned != ".", cleaned != ".." else { return nil }
        return cleaned
    }

    /// A control character (C0, DEL, C1) or an invisible format character (bidirectional
    /// overrides and isolates, zero-width characters: `invoice<U+202E>fdp.exe` shows as
    /// `invoiceexe.pdf`).
    private static func isHidden(_ scalar: Unicode.Scalar) -> Bool {
        MessageSanitizer.isControl(scalar) || scalar.properties.generalCategory == .format
    }
}
