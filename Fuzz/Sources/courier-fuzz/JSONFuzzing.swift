@testable import Courier
import Foundation

/// The JSON parser on arbitrary bytes: never traps; whatever it accepts, the writer writes back
/// into text that parses to the same value.
enum JSONFuzzing {
    static func run(_ bytes: [UInt8]) {
        let data = Data(bytes)
        guard let value = try? JSONParser.parse(data, allowFragments: true) else { return }
        let written = JSONWriter.data(for: value, options: [])
        guard let reparsed = try? JSONParser.parse(written, allowFragments: true) else {
            invariant(false, "the writer's output does not parse: \(String(decoding: written, as: UTF8.self))")
            return
        }
        invariant(reparsed == value, "round trip changed the value: \(value) → \(reparsed)")
        _ = try? JSONResponseSerializer().responseObject(for: nil, data: data)
    }
}
