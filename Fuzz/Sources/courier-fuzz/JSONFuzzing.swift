@testable import Courier
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The JSON parser on arbitrary bytes: never traps; whatever it accepts, the writer writes back
/// into text that parses to the same value (numbers compared as numbers: the writer puts an
/// integral double such as `-3e10` as `-30000000000`, as JSONSerialization does, which reads
/// back as an integer).
enum JSONFuzzing {
    static func run(_ bytes: [UInt8]) {
        let data = Data(bytes)
        guard let value = try? JSONParser.parse(data, allowFragments: true) else { return }
        let written = JSONWriter.data(for: value, options: [])
        guard let reparsed = try? JSONParser.parse(written, allowFragments: true) else {
            invariant(false, "the writer's output does not parse: \(String(decoding: written, as: UTF8.self))")
            return
        }
        invariant(sameJSON(reparsed, value), "round trip changed the value: \(value) → \(reparsed)")
        _ = try? JSONResponseSerializer().responseObject(for: HTTPURLResponse?.none, data: data)
    }

    private static func sameJSON(_ lhs: JSONValue, _ rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.int(let a), .double(let b)), (.double(let b), .int(let a)): return Double(a) == b
        case (.array(let a), .array(let b)): return a.count == b.count && zip(a, b).allSatisfy(sameJSON)
        case (.object(let a), .object(let b)):
            return a.count == b.count && a.allSatisfy { key, value in b[key].map { sameJSON(value, $0) } ?? false }
        default: return lhs == rhs
        }
    }
}
