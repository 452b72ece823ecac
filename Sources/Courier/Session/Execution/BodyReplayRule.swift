import CourierEngine

/// What happens to a request body when a redirect or an answered challenge sends the request
/// again, as a pure function: a redirect that changed the method (POST → GET) sends no body;
/// bytes and files replay as they are; a stream has been read and needs a fresh one (from the
/// need-new-body-stream block, else the task's own factory, such as a multipart form's).
enum BodyReplayRule: Equatable {
    /// Send the same body again.
    case keep
    /// Send no body.
    case drop
    /// Ask for a fresh body; without one the task fails with
    /// ``CourierError/requestBodyNotReplayable(url:)``.
    case needsFreshBody

    /// The rule for a body (`isReplayable`: bytes or a file) resent as `nextMethod` after
    /// `previousMethod` (methods compared without case; nil is GET).
    static func decide(previousMethod: String?, nextMethod: String?, isReplayable: Bool) -> BodyReplayRule {
        if (nextMethod ?? "GET").uppercased() != (previousMethod ?? "GET").uppercased() { return .drop }
        return isReplayable ? .keep : .needsFreshBody
    }

    /// The body to send with the next hop after `current` went out with `previousMethod`: the
    /// outer optional is nil when a fresh body was needed and `fresh` gave none (the task fails
    /// with ``CourierError/requestBodyNotReplayable(url:)``); the inner nil sends no body.
    static func body(
        _ current: RequestBody?, previousMethod: String?, nextMethod: String?, fresh: () -> RequestBody?
    ) -> RequestBody?? {
        guard let current else { return .some(nil) }
        switch decide(previousMethod: previousMethod, nextMethod: nextMethod, isReplayable: current.isReplayable) {
        case .drop: return .some(nil)
        case .keep: return current
        case .needsFreshBody: return fresh().map { .some($0) }
        }
    }
}
