/// A number of seconds given on the command line (`--timeout`, `--max-time`, `bench
/// --duration`), checked before it becomes nanoseconds. Pure.
///
/// The rule: nan, zero and negative values are refused with a message naming the option;
/// values above ``maximum`` (`inf` included) are clamped to it: 10⁹ s, about 31 years, which is
/// "no limit" in practice and still fits in `Int64` nanoseconds (with room for adding it to a
/// clock reading), so no later conversion can trap.
enum SecondsOption {
    /// The largest number of seconds used: 10⁹ (≈ 31.7 years).
    static let maximum: Double = 1_000_000_000

    /// Why a value was refused.
    struct InvalidValue: Error, Equatable, CustomStringConvertible {
        /// The option, e.g. `--timeout`.
        var option: String
        /// The value as parsed.
        var value: Double

        var description: String {
            let shown = value.isFinite && value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
            return "\(option) takes a number of seconds more than 0; got \(shown)"
        }
    }

    /// `value` if it is a usable number of seconds, ``maximum`` if it is larger.
    /// - Throws: ``InvalidValue`` for nan, zero and negative values.
    static func checked(_ value: Double, option: String) throws(InvalidValue) -> Double {
        guard !value.isNaN, value > 0 else { throw InvalidValue(option: option, value: value) }
        return min(value, maximum)
    }

    /// `seconds` as a `Duration`, rounded up to the millisecond and clamped to ``maximum``;
    /// nan, zero and negative values give zero.
    static func duration(_ seconds: Double) -> Duration {
        guard seconds > 0 else { return .zero }  // nan too
        return .milliseconds(Int64((min(seconds, maximum) * 1000).rounded(.up)))
    }
}
