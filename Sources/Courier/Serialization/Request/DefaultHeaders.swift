import Foundation

/// The default `Accept-Language` and `User-Agent` of ``HTTPRequestSerializer``, computed the
/// way AFNetworking does, with Linux's sources for languages and versions.
enum DefaultHeaders {
    /// AFN: item i gets `;q=%0.1g` of `1.0 − 0.1·i`, so `q=1`, `q=0.9`, …, stopping after the
    /// item whose q ≤ 0.5 (at most six items).
    static func acceptLanguage(for languages: [String]) -> String {
        let qualities = ["1", "0.9", "0.8", "0.7", "0.6", "0.5"]
        return zip(languages, qualities).map { "\($0);q=\($1)" }.joined(separator: ", ")
    }

    /// The process's preferred languages as BCP 47 tags: `LANGUAGE` (colon-separated), else
    /// the first of `LC_ALL`, `LC_MESSAGES`, `LANG` that names a language, else Foundation's
    /// `Locale.preferredLanguages`, else `en`. `de_DE.UTF-8` becomes `de-DE`; `C` and
    /// `POSIX` name no language.
    static func preferredLanguages(environment: [String: String]) -> [String] {
        func tag(_ posix: String) -> String? {
            let withoutCodeset = posix.split(separator: ".", maxSplits: 1).first.map(String.init) ?? ""
            let withoutModifier = withoutCodeset.split(separator: "@", maxSplits: 1).first.map(String.init) ?? ""
            guard !withoutModifier.isEmpty, withoutModifier != "C", withoutModifier != "POSIX" else { return nil }
            return withoutModifier.replacingOccurrences(of: "_", with: "-")
        }
        if let list = environment["LANGUAGE"] {
            let tags = list.split(separator: ":").compactMap { tag(String($0)) }
            if !tags.isEmpty { return tags }
        }
        for name in ["LC_ALL", "LC_MESSAGES", "LANG"] {
            if let value = environment[name], !value.isEmpty {
                if let tag = tag(value) { return [tag] }
                break
            }
        }
        let foundation = Locale.preferredLanguages
        return foundation.isEmpty ? ["en"] : foundation
    }

    /// `Executable/Version (Linux; <OS version>)`: the executable is the bundle's executable
    /// or identifier, else the process name; the version is the bundle's short version or
    /// version, else `unknown` (an executable on Linux rarely has an Info.plist).
    static func userAgent(
        info: [String: Any],
        processName: String,
        operatingSystemVersion: String
    ) -> String {
        let name = (info["CFBundleExecutable"] as? String) ?? (info["CFBundleIdentifier"] as? String) ?? processName
        let version =
            (info["CFBundleShortVersionString"] as? String) ?? (info["CFBundleVersion"] as? String) ?? "unknown"
        return asciiOnly("\(name)/\(version) (Linux; \(operatingSystemVersion))")
    }

    /// AFN's `Any-Latin; Latin-ASCII; [:^ASCII:] Remove`: transliterate to Latin, strip
    /// diacritics, then drop whatever is still not printable ASCII.
    static func asciiOnly(_ string: String) -> String {
        if string.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) { return string }
        let latin = string.applyingTransform(.toLatin, reverse: false) ?? string
        let stripped = latin.applyingTransform(.stripDiacritics, reverse: false) ?? latin
        let scalars = stripped.unicodeScalars.filter { $0.value >= 0x20 && $0.value < 0x7F }
        return String(String.UnicodeScalarView(scalars))
    }

    static let processAcceptLanguage: String = acceptLanguage(
        for: preferredLanguages(environment: ProcessInfo.processInfo.environment))

    static let processUserAgent: String = userAgent(
        info: Bundle.main.infoDictionary ?? [:],
        processName: ProcessInfo.processInfo.processName,
        operatingSystemVersion: ProcessInfo.processInfo.operatingSystemVersionString)
}
