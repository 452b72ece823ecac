public import Foundation
#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

/// Decodes the body as text in the response's `charset` (not in AFNetworking; Alamofire's
/// `StringResponseSerializer` is the model).
///
/// The encoding is the Content-Type's `charset` parameter when it names a known encoding
/// (UTF-8, UTF-16 and its LE/BE forms, UTF-32, US-ASCII, ISO-8859-1/Latin-1, ISO-8859-2,
/// windows-1250/1251/1252/1253/1254, Shift_JIS, EUC-JP, ISO-2022-JP, Mac Roman), else
/// ``defaultEncoding`` (UTF-8). Acceptable content types: any. Empty data gives `""`;
/// bytes that don't decode throw
/// ``CourierError/responseSerializationFailed(reason:response:data:underlying:)``.
/// Thread-safe.
public final class StringResponseSerializer: HTTPResponseSerializerWrapper {
    /// Holds the validation settings.
    public let base: HTTPResponseSerializer
    private let settings: LockedValue<String.Encoding>

    /// Creates a serializer falling back to `defaultEncoding` (UTF-8).
    public init(defaultEncoding: String.Encoding = .utf8) {
        base = HTTPResponseSerializer(acceptableContentTypes: nil)
        settings = LockedValue(defaultEncoding)
    }

    /// The encoding used when the response names none (or an unknown one). Default UTF-8.
    public var defaultEncoding: String.Encoding {
        get { settings.value }
        set { settings.value = newValue }
    }

    /// The text.
    /// - Throws: the validation error, or a serialization error when the bytes don't decode.
    public func responseObject(for response: HTTPURLResponse?, data: Data?) throws -> String {
        try serializeResponse(response, data: data).get(fallback: "")
    }

    /// The text and the validation error together.
    public func serializeResponse(_ response: HTTPURLResponse?, data: Data?) -> SerializedResponse<String> {
        serialize(response.map(SerializerInput.init), data: data)
    }

    /// The text and the validation error together, reading `input`.
    func serialize(_ input: SerializerInput?, data: Data?) -> SerializedResponse<String> {
        let validation = base.validation(input, data: data)
        if validation.skipsParsing { return SerializedResponse(object: nil, error: validation.error) }
        let data = data ?? Data()
        let encoding = input?.textEncodingName.flatMap(Self.encoding(forCharset:)) ?? defaultEncoding
        guard let string = String(data: data, encoding: encoding) else {
            return SerializedResponse(
                object: nil,
                error: .responseSerializationFailed(
                    reason: "the body is not valid \(encoding)", response: input?.response, data: data,
                    underlying: validation.error))
        }
        return SerializedResponse(object: string, error: validation.error)
    }

    /// The encoding an IANA charset name stands for, or nil.
    static func encoding(forCharset charset: String) -> String.Encoding? {
        let name = charset.trimmingCharacters(in: CharacterSet(charactersIn: "\" ")).lowercased()
        switch name {
        case "utf-8", "utf8": return .utf8
        case "utf-16": return .utf16
        case "utf-16le": return .utf16LittleEndian
        case "utf-16be": return .utf16BigEndian
        case "utf-32": return .utf32
        case "utf-32le": return .utf32LittleEndian
        case "utf-32be": return .utf32BigEndian
        case "us-ascii", "ascii": return .ascii
        case "iso-8859-1", "latin1", "iso_8859-1", "l1": return .isoLatin1
        case "iso-8859-2", "latin2": return .isoLatin2
        case "windows-1250", "cp1250": return .windowsCP1250
        case "windows-1251", "cp1251": return .windowsCP1251
        case "windows-1252", "cp1252": return .windowsCP1252
        case "windows-1253", "cp1253": return .windowsCP1253
        case "windows-1254", "cp1254": return .windowsCP1254
        case "shift_jis", "shift-jis", "sjis": return .shiftJIS
        case "euc-jp": return .japaneseEUC
        case "iso-2022-jp": return .iso2022JP
        case "macintosh", "mac-roman", "macroman": return .macOSRoman
        default: return nil
        }
    }
}

extension StringResponseSerializer: InputSerializing {
    func responseObject(for input: SerializerInput?, data: Data?) throws(CourierError) -> String {
        try serialize(input, data: data).get(fallback: "")
    }
}
