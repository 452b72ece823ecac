/// The positional arguments of `courier [METHOD] URL [ITEM ...]`, taken apart as HTTPie does.
struct RequestArguments: Equatable {
    /// The method given on the command line, upper-cased; nil when it is to be inferred.
    var method: String?
    /// The URL, completed with a scheme (`http://`) and, for `:port/path`, `localhost`.
    var url: String
    /// The request items after the URL.
    var items: [RequestItem]

    /// Why the arguments don't form a request.
    struct UsageError: Error, Equatable, CustomStringConvertible {
        var description: String
    }

    /// Splits `arguments`: a first word made only of letters, followed by more arguments, is
    /// the method; then the URL; then the items.
    /// - Throws: ``UsageError`` when there is no URL, ``RequestItem/ParseError`` for a bad item.
    /// `defaultScheme` (`--default-scheme`, `--https`) completes a URL typed without one.
    static func parse(_ arguments: [String], defaultScheme: String = "http") throws -> RequestArguments {
        var remaining = arguments[...]
        var method: String?
        if remaining.count >= 2, let first = remaining.first, isMethod(first) {
            method = first.uppercased()
            remaining = remaining.dropFirst()
        }
        guard let url = remaining.first, !url.isEmpty else {
            throw UsageError(description: "no URL given; usage: courier [METHOD] URL [ITEM ...]")
        }
        let items = try remaining.dropFirst().map { try RequestItem.parse($0) }
        return RequestArguments(method: method, url: completedURL(url, defaultScheme: defaultScheme), items: items)
    }

    /// The method to send: the given one, else POST when data items are present, else GET.
    var effectiveMethod: String {
        method ?? (items.contains(where: \.isData) ? "POST" : "GET")
    }

    private static func isMethod(_ word: String) -> Bool {
        !word.isEmpty && word.unicodeScalars.allSatisfy { ("a"..."z").contains($0) || ("A"..."Z").contains($0) }
    }

    /// HTTPie's shorthands: `:3000/x` → `http://localhost:3000/x`, `:/x` → `http://localhost/x`,
    /// `example.org` → `http://example.org` (`defaultScheme` instead of `http`). `http+unix://`
    /// and `https+unix://` URLs are kept as they are.
    static func completedURL(_ url: String, defaultScheme: String = "http") -> String {
        if url.hasPrefix(":") {
            let rest = url.dropFirst()
            if rest.hasPrefix("/") || rest.isEmpty { return defaultScheme + "://localhost" + rest }
            return defaultScheme + "://localhost:" + rest
        }
        let lowercased = url.lowercased()
        if lowercased.hasPrefix("http://") || lowercased.hasPrefix("https://") || lowercased.hasPrefix("http+unix://")
            || lowercased.hasPrefix("https+unix://")
        {
            return url
        }
        return defaultScheme + "://" + url
    }
}
