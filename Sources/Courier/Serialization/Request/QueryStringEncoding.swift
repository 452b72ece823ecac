/// Builds a query string from parameters: AFNetworking's `AFQueryStringFromParameters`.
///
/// - Keys are sorted ascending at every level of nesting; a nested dictionary's entries are
///   written as `parent[child]`.
/// - Array elements are written in order under `key[]` (no index).
/// - Set elements are sorted by their ``ParameterValue/description`` and written under the
///   same key (no brackets).
/// - ``ParameterValue/null`` writes the key alone, without `=`.
/// - Scalars write `escaped(key)=escaped(value)`; `true`/`false` are `1`/`0`.
/// - Pairs are joined with `&`; empty containers contribute nothing, so `[:]` gives `""`.
///
/// Keys and values are escaped with ``percentEscaped(_:)`` (brackets included: `a[b]` is
/// `a%5Bb%5D`). Pure and thread-safe.
///
/// ```swift
/// queryString(from: ["key": "value", "key1": "value&"])   // "key=value&key1=value%26"
/// ```
public func queryString(from parameters: Parameters) -> String {
    QueryStringEncoding.pairs(from: parameters).map(\.urlEncodedString).joined(separator: "&")
}

/// The flattening behind ``queryString(from:)``, shared with multipart forms.
enum QueryStringEncoding {
    /// One `field=value` pair before escaping; `value` is a scalar or ``ParameterValue/null``
    /// (AFN's NSNull: a bare key in a query, an empty form-data part).
    struct Pair: Equatable {
        var field: String
        var value: ParameterValue

        var urlEncodedString: String {
            value == .null ? percentEscaped(field) : percentEscaped(field) + "=" + percentEscaped(value.description)
        }
    }

    /// AFN's `AFQueryStringPairsFromDictionary`.
    static func pairs(from parameters: Parameters) -> [Pair] {
        var result = [Pair]()
        for key in parameters.keys.sorted() {
            if let value = parameters[key] { append(key: key, value: value, to: &result) }
        }
        return result
    }

    /// AFN's `AFQueryStringPairsFromKeyAndValue`.
    static func append(key: String, value: ParameterValue, to result: inout [Pair]) {
        switch value {
        case .dictionary(let dictionary):
            for nestedKey in dictionary.keys.sorted() {
                if let nested = dictionary[nestedKey] {
                    append(key: "\(key)[\(nestedKey)]", value: nested, to: &result)
                }
            }
        case .array(let values):
            for nested in values { append(key: "\(key)[]", value: nested, to: &result) }
        case .set(let values):
            // AFN sorts by description only; equal descriptions ("1" and 1) are then ordered
            // by their full rendering so the output is deterministic.
            // The sort keys are made once per element (String(reflecting:) goes through Mirror).
            let keyed = values.map { (description: $0.description, full: String(reflecting: $0), value: $0) }
            let sorted = keyed.sorted { ($0.description, $0.full) < ($1.description, $1.full) }.map(\.value)
            for nested in sorted {
                append(key: key, value: nested, to: &result)
            }
        case .string, .int, .double, .bool, .null:
            result.append(Pair(field: key, value: value))
        }
    }
}
