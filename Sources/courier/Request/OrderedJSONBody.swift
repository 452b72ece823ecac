import Courier
import Foundation

/// The JSON object of data fields, in the order they were typed (HTTPie keeps it): strings
/// escaped here, raw `:=` values validated and then copied without their insignificant
/// whitespace, so their own key order is kept too. A name typed twice keeps its first
/// position and its last value. Pure.
enum OrderedJSONBody {
    /// One member of the object: its name and its JSON text.
    struct Member: Equatable {
        var name: String
        var json: String
    }

    /// The object's text, compact (`{"a":"1","b":2}`).
    static func encode(_ members: [Member]) -> String {
        var order: [String] = []
        var values: [String: String] = [:]
        for member in members {
            if values.updateValue(member.json, forKey: member.name) == nil { order.append(member.name) }
        }
        return "{" + order.map { quoted($0) + ":" + (values[$0] ?? "null") }.joined(separator: ",") + "}"
    }

    /// `text` as a JSON string literal.
    static func quoted(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }

    /// A raw JSON value without insignificant whitespace, or nil when `text` is not JSON.
    static func compactRawJSON(_ text: String) -> String? {
        guard (try? JSONValue(parsing: Data(text.utf8))) != nil else { return nil }
        var out = ""
        var inString = false
        var escaped = false
        for scalar in text.unicodeScalars {
            if inString {
                out.unicodeScalars.append(scalar)
                if escaped {
                    escaped = false
                } else if scalar == "\\" {
                    escaped = true
                } else if scalar == "\"" {
                    inString = false
                }
                continue
            }
            switch scalar {
            case " ", "\t", "\n", "\r": continue
            case "\"": inString = true
            default: break
            }
            out.unicodeScalars.append(scalar)
        }
        return out
    }
}
