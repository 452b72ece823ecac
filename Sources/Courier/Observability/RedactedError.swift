/// An error as a span records it when ``ObservabilityRedaction`` hid something in its
/// description (a URL with credentials or a token, as `invalid URL: http://u:p@h:0/` names
/// it): exporters write what `String(describing:)` gives, so the span holds this instead of
/// the original error.
struct RedactedError: Error, CustomStringConvertible {
    /// The original error's description, redacted.
    let description: String
}
