import CourierEngine

/// Bounded values for metric dimensions and span attributes: a label never carries free text
/// from a request or a server (which would make one time series per value). Pure.
enum ObservabilityLabels {
    /// The methods reported as themselves (RFC 9110's and PATCH); any other is `_OTHER`
    /// (OpenTelemetry's rule for `http.request.method`).
    static let knownMethods: Set<String> = ["GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH"]

    /// `method` if it is a known method, else `_OTHER`.
    static func method(_ method: String) -> String {
        knownMethods.contains(method) ? method : "_OTHER"
    }

    /// `1xx` … `5xx`, or `error` when no response came (nil) or the code is out of range.
    static func statusClass(_ status: Int?) -> String {
        guard let status, (100...599).contains(status) else { return "error" }
        return "\(status / 100)xx"
    }

    /// A short name for an engine failure (OpenTelemetry's `error.type`): the case's name in
    /// snake case (`cannot_connect`, `connection_lost`, ...), a timeout with its kind
    /// (`timeout_connect`, `timeout_idle`, `timeout_deadline`). One per case, so bounded; a case
    /// added to ``EngineError`` later gets its name without a change here.
    static func errorType(_ error: EngineError) -> String {
        if case .timedOut(let kind) = error { return "timeout_\(kind.rawValue)" }
        // A case with a payload is named by its mirror; the two without one (whose description
        // is a sentence) by hand.
        if let label = Mirror(reflecting: error).children.first?.label { return snakeCase(label) }
        if case .cancelled = error { return "cancelled" }
        if case .shutDown = error { return "shut_down" }
        return "engine_error"
    }

    /// `cannotConnect` → `cannot_connect`.
    static func snakeCase(_ name: String) -> String {
        var result = ""
        for character in name {
            if character.isUppercase {
                if !result.isEmpty { result.append("_") }
                result.append(contentsOf: character.lowercased())
            } else {
                result.append(character)
            }
        }
        return result
    }

    /// A short name for any error a task ends with: the enum case's name (for
    /// ``CourierError``, e.g. `cannotConnect`, `cancelled`), else the type's name. Bounded by
    /// the number of cases and types.
    static func errorType(_ error: any Error) -> String {
        if let engine = error as? EngineError { return errorType(engine) }
        let mirror = Mirror(reflecting: error)
        if mirror.displayStyle == .enum {
            if let label = mirror.children.first?.label { return label }
            let described = String(describing: error)
            if described.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" }) { return described }
        }
        return String(describing: type(of: error))
    }
}
