import ArgumentParser
import Foundation

/// Parses a comma-separated list of raw values ("a,b"), or "all".
///
/// - Throws: `ValidationError` naming an unknown value and the known ones.
public func parseList<T: RawRepresentable & CaseIterable>(_ text: String, as type: T.Type) throws -> [T]
where T.RawValue == String {
    if text == "all" { return Array(T.allCases) }
    return try text.split(separator: ",").map { part in
        let name = part.trimmingCharacters(in: .whitespaces)
        guard let value = T(rawValue: name) else {
            let known = T.allCases.map(\.rawValue).joined(separator: ", ")
            throw ValidationError("unknown value '\(name)'; expected one of: \(known), all")
        }
        return value
    }
}
