import Foundation
import Testing

@testable import courier

/// The rule for seconds given on the command line, with plain values.
@Suite("SecondsOption")
struct SecondsOptionTests {
    @Test("nan, zero and negative values are refused, naming the option")
    func refused() {
        for value in [Double.nan, 0, -0.0, -1, -Double.infinity, -Double.greatestFiniteMagnitude] {
            #expect(throws: SecondsOption.InvalidValue.self) { try SecondsOption.checked(value, option: "--timeout") }
        }
        #expect(SecondsOption.InvalidValue(option: "--max-time", value: -1).description
            == "--max-time takes a number of seconds more than 0; got -1")
        #expect(SecondsOption.InvalidValue(option: "--timeout", value: -0.5).description.hasSuffix("got -0.5"))
        #expect(SecondsOption.InvalidValue(option: "--timeout", value: .nan).description.hasSuffix("got nan"))
        #expect(SecondsOption.InvalidValue(option: "--timeout", value: -1e300).description.hasSuffix("got -1e+300"))
    }

    @Test("huge values (inf too) are clamped to 10⁹ s; others kept; durations never trap")
    func clamped() throws {
        #expect(try SecondsOption.checked(0.25, option: "--timeout") == 0.25)
        for value in [1e9, 1e10, 1e300, Double.greatestFiniteMagnitude, .infinity] {
            #expect(try SecondsOption.checked(value, option: "--timeout") == SecondsOption.maximum)
        }
        #expect(SecondsOption.duration(1e300) == .seconds(1_000_000_000))
        #expect(SecondsOption.duration(.infinity) == .seconds(1_000_000_000))
        #expect(SecondsOption.duration(.nan) == .zero)
        #expect(SecondsOption.duration(0.0015) == .milliseconds(2))
        // The clamped value still fits in Int64 nanoseconds with room to add a clock reading.
        #expect(Int64(exactly: SecondsOption.maximum * 1e9) != nil)
    }
}
