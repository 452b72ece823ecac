import Foundation

/// Writes ``JSONValue``s as JSON text the way `JSONSerialization` does: `/` escaped as `\/`
/// unless asked not to, integral doubles without a fraction, pretty printing with two spaces
/// and `" : "`. Object keys are always sorted (a Swift dictionary has no order to keep), so
/// the output is deterministic.
enum JSONWriter {
    struct Options: OptionSet {
        let rawValue: Int
        static let prettyPrinted = Options(rawValue: 1)
        static let withoutEscapingSlashes = Options(rawValue: 2)
        static let fragmentsAllowed = Options(rawValue: 4)

        init(rawValue: Int) { self.rawValue = rawValue }

        init(_ options: JSONSerialization.WritingOptions) {
            self = []
            if options.contains(.prettyPrinted) { insert(.prettyPrinted) }
            if options.contains(.withoutEscapingSlashes) { insert(.withoutEscapingSlashes) }
            if options.contains(.fragmentsAllowed) { insert(.fragmentsAllowed) }
        }
    }

    static func data(for value: JSONValue, options: Options) -> Data {
        var output = [UInt8]()
        write(value, into: &output, options: options, depth: 0)
        return Data(output)
    }

    private static func write(_ value: JSONValue, into output: inout [UInt8], options: Options, depth: Int) {
        switch value {
        case .null: output.append(contentsOf: "null".utf8)
        case .bool(let bool): output.append(contentsOf: (bool ? "true" : "false").utf8)
        case .int(let int): output.append(contentsOf: String(int).utf8)
        case .double(let double):
            let text = double.isFinite ? ParameterValue.numberDescription(double) : "null"
            output.append(contentsOf: text.utf8)
        case .string(let string): writeString(string, into: &output, options: options)
        case .array(let array):
            output.append(UInt8(ascii: "["))
            for (index, element) in array.enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                newline(into: &output, options: options, depth: depth + 1)
                write(element, into: &output, options: options, depth: depth + 1)
            }
            if !array.isEmpty { newline(into: &output, options: options, depth: depth) }
            output.append(UInt8(ascii: "]"))
        case .object(let object):
            output.append(UInt8(ascii: "{"))
            for (index, member) in object.sorted(by: { $0.key < $1.key }).enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                newline(into: &output, options: options, depth: depth + 1)
                writeString(member.key, into: &output, options: options)
                output.append(contentsOf: (options.contains(.prettyPrinted) ? " : " : ":").utf8)
                write(member.value, into: &output, options: options, depth: depth + 1)
            }
            if !object.isEmpty { newline(into: &output, options: options, depth: depth) }
            output.append(UInt8(ascii: "}"))
        }
    }

    private static func newline(into output: inout [UInt8], options: Options, depth: Int) {
        guard options.contains(.prettyPrinted) else { return }
        output.append(UInt8(ascii: "\n"))
        output.append(contentsOf: repeatElement(UInt8(ascii: " "), count: depth * 2))
    }

    private static let hex: [UInt8] = Array("0123456789abcdef".utf8)

    private static func writeString(_ string: String, into output: inout [UInt8], options: Options) {
        output.append(UInt8(ascii: "\""))
        for byte in string.utf8 {
            switch byte {
            case UInt8(ascii: "\""): output.append(contentsOf: "\\\"".utf8)
            case UInt8(ascii: "\\"): output.append(contentsOf: "\\\\".utf8)
            case UInt8(ascii: "/"):
                if options.contains(.withoutEscapingSlashes) {
                    output.append(byte)
                } else {
                    output.append(contentsOf: "\\/".utf8)
                }
            case 0x0A: output.append(contentsOf: "\\n".utf8)
            case 0x0D: output.append(contentsOf: "\\r".utf8)
            case 0x09: output.append(contentsOf: "\\t".utf8)
            case 0x08: output.append(contentsOf: "\\b".utf8)
            case 0x0C: output.append(contentsOf: "\\f".utf8)
            case 0x00..<0x20:
                output.append(contentsOf: "\\u00".utf8)
                output.append(hex[Int(byte >> 4)])
                output.append(hex[Int(byte & 0x0F)])
            default: output.append(byte)
            }
        }
        output.append(UInt8(ascii: "\""))
    }
}
