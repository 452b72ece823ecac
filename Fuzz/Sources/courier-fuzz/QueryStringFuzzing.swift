import Courier
import Foundation

/// Query-string encoding of parameter trees built from the fuzzer's bytes: never traps, the
/// output is plain ASCII without spaces, and every key and value comes back with percent
/// decoding (`percentEscaped` is reversible).
enum QueryStringFuzzing {
    static func run(_ bytes: [UInt8]) {
        var input = FuzzInput(bytes)
        var parameters: Parameters = [:]
        while !input.isAtEnd, parameters.count < 16 {
            parameters[input.string()] = value(from: &input, depth: 0)
        }
        let query = queryString(from: parameters)
        invariant(query.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F }, "non-ASCII or space in \(query)")
        for pair in query.split(separator: "&", omittingEmptySubsequences: false) where !pair.isEmpty {
            for part in pair.split(separator: "=", maxSplits: 1) {
                invariant(String(part).removingPercentEncoding != nil, "undecodable part \(part) in \(query)")
            }
        }
        let text = String(decoding: bytes, as: UTF8.self)
        invariant(percentEscaped(text).removingPercentEncoding == text, "percentEscaped is not reversible for \(text.debugDescription)")
    }

    private static func value(from input: inout FuzzInput, depth: Int) -> ParameterValue {
        let kind = input.byte() % (depth < 4 ? 8 : 5)
        switch kind {
        case 0: return .string(input.string())
        case 1: return .int(Int(Int8(bitPattern: input.byte())) * Int(input.byte()))
        case 2: return .double(Double(Int8(bitPattern: input.byte())) / 7)
        case 3: return .bool(input.byte() & 1 == 1)
        case 4: return .null
        case 5: return .array((0..<Int(input.byte() % 4)).map { _ in value(from: &input, depth: depth + 1) })
        case 6: return .set(Set((0..<Int(input.byte() % 4)).map { _ in value(from: &input, depth: depth + 1) }))
        default:
            var dictionary: [String: ParameterValue] = [:]
            for _ in 0..<Int(input.byte() % 4) { dictionary[input.string()] = value(from: &input, depth: depth + 1) }
            return .dictionary(dictionary)
        }
    }
}
