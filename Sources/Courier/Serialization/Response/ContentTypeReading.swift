import NIOHTTP1

/// A response's `Content-Type` as FoundationNetworking's `HTTPURLResponse` reports it, read
/// straight from the engine's head so that a serializer needs no `HTTPURLResponse` to check it.
enum ContentTypeReading {
    /// The MIME type and text encoding name the `HTTPURLResponse` made from a head with
    /// `fields` would report, or nil when the `Content-Type` is one whose reading this does not
    /// repeat exactly (repeated, quoted, escaped or non-ASCII): then ask the response.
    ///
    /// FoundationNetworking's reading, repeated here: the value up to the first `;` is the MIME
    /// type, lowercased and not trimmed (an empty value gives `""`); the first parameter whose
    /// name, trimmed of spaces and tabs, is exactly `charset` gives the text encoding (its value
    /// trimmed and lowercased; none without `=`). `SerializerInputTests` pins it against
    /// Foundation's.
    static func read(in fields: HTTPHeaders) -> (mimeType: String?, textEncodingName: String?)? {
        var contentType: String?
        for (name, value) in fields where isContentType(name) {
            guard contentType == nil else { return nil }  // repeated: Foundation's pick depends on dictionary order
            contentType = value
        }
        guard let contentType else { return (nil, nil) }
        var hasParameters = false
        var isLowercase = true
        for byte in contentType.utf8 {
            guard byte < 0x80, byte != UInt8(ascii: "\""), byte != UInt8(ascii: "\\") else { return nil }
            if byte == UInt8(ascii: ";") { hasParameters = true }
            if byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") { isLowercase = false }
        }
        // The common `type/subtype` with nothing to change: the value itself, no copy.
        guard hasParameters || !isLowercase else { return (contentType, nil) }
        let parts = contentType.split(separator: ";", omittingEmptySubsequences: false)
        var textEncodingName: String?
        for part in parts.dropFirst() {
            let pair = part.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard trimmedOfSpacesAndTabs(pair[0]) == "charset" else { continue }
            textEncodingName = pair.count > 1 ? trimmedOfSpacesAndTabs(pair[1]).lowercased() : nil
            break
        }
        return (parts[0].lowercased(), textEncodingName)
    }

    /// Whether a field name is `Content-Type`, in any case (without making a lowercased copy).
    private static func isContentType(_ name: String) -> Bool {
        let expected = "content-type".utf8
        guard name.utf8.count == expected.count else { return false }
        return zip(name.utf8, expected).allSatisfy { byte, lower in
            byte == lower || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") && byte | 0x20 == lower)
        }
    }

    /// `text` without leading and trailing spaces and tabs (`CharacterSet.whitespaces` on ASCII).
    private static func trimmedOfSpacesAndTabs(_ text: Substring) -> Substring {
        let isBlank: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = text.firstIndex(where: { !isBlank($0) }), let last = text.lastIndex(where: { !isBlank($0) }) else {
            return text[text.endIndex...]
        }
        return text[first...last]
    }
}
