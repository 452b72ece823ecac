/// Punycode (RFC 3492) encoding of one domain label, for comparing internationalised host names
/// in their ASCII form (`bücher` → `xn--bcher-kva`).
///
/// Only the encoding step of IDNA: no Unicode normalisation or mapping (UTS #46) is applied, so
/// callers pass labels already lowercased. Pure.
enum Punycode {
    private static let base = 36, tMin = 1, tMax = 26, skew = 38, damp = 700
    private static let initialBias = 72, initialN = 128

    /// A DNS label holds at most 63 bytes; a longer Unicode label can't become one, and
    /// refusing it early keeps the quadratic encoder cheap on hostile input.
    static let maximumLabelScalars = 63

    /// `label` as an A-label (`xn--…`), or the label itself when it is all ASCII; nil for a
    /// non-ASCII label of more than ``maximumLabelScalars`` scalars or whose encoding overflows.
    static func asciiLabel(_ label: Substring) -> String? {
        guard label.unicodeScalars.contains(where: { !$0.isASCII }) else { return String(label) }
        guard label.unicodeScalars.count <= maximumLabelScalars else { return nil }
        return encode(Array(label.unicodeScalars)).map { "xn--" + $0 }
    }

    /// A host name with each non-ASCII label converted; nil when a label can't be encoded.
    static func asciiHost(_ host: String) -> String? {
        guard host.unicodeScalars.contains(where: { !$0.isASCII }) else { return host }
        var labels: [String] = []
        for label in host.split(separator: ".", omittingEmptySubsequences: false) {
            guard let ascii = asciiLabel(label) else { return nil }
            labels.append(ascii)
        }
        return labels.joined(separator: ".")
    }

    /// RFC 3492 §6.3 without the `xn--` prefix.
    static func encode(_ input: [Unicode.Scalar]) -> String? {
        var output = input.filter(\.isASCII).map { Character($0) }
        let basicCount = output.count
        var handled = basicCount
        if basicCount > 0 { output.append("-") }
        var n = initialN, delta = 0, bias = initialBias
        while handled < input.count {
            // The smallest code point not yet handled.
            guard let m = input.lazy.map({ Int($0.value) }).filter({ $0 >= n }).min() else { return nil }
            let (step, stepOverflow) = (m - n).multipliedReportingOverflow(by: handled + 1)
            guard !stepOverflow, let advanced = add(delta, step) else { return nil }
            delta = advanced
            n = m
            for scalar in input {
                let code = Int(scalar.value)
                if code < n {
                    guard let next = add(delta, 1) else { return nil }
                    delta = next
                }
                guard code == n else { continue }
                var q = delta
                var k = base
                while true {
                    let t = k <= bias ? tMin : (k >= bias + tMax ? tMax : k - bias)
                    if q < t { break }
                    output.append(digit(t + (q - t) % (base - t)))
                    q = (q - t) / (base - t)
                    k += base
                }
                output.append(digit(q))
                bias = adapt(delta, numPoints: handled + 1, firstTime: handled == basicCount)
                delta = 0
                handled += 1
            }
            delta += 1
            n += 1
        }
        return String(output)
    }

    private static func add(_ a: Int, _ b: Int) -> Int? {
        let (sum, overflow) = a.addingReportingOverflow(b)
        return overflow ? nil : sum
    }

    private static func digit(_ value: Int) -> Character {
        // 0–25 → a–z, 26–35 → 0–9.
        Character(Unicode.Scalar(UInt8(value < 26 ? 97 + value : 22 + value)))
    }

    private static func adapt(_ delta: Int, numPoints: Int, firstTime: Bool) -> Int {
        var delta = firstTime ? delta / damp : delta / 2
        delta += delta / numPoints
        var k = 0
        while delta > ((base - tMin) * tMax) / 2 {
            delta /= base - tMin
            k += base
        }
        return k + (base - tMin + 1) * delta / (delta + skew)
    }
}
