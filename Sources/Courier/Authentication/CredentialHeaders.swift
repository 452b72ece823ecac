/// The header fields that carry credentials, and the set each of Courier's rules takes. Four
/// rules need such a list and they differ on purpose; naming them here keeps them from
/// drifting apart. Pure constants; thread-safe.
///
/// | set | used by | why this set |
/// |---|---|---|
/// | ``requestFields`` | ``RedirectRule`` (dropped on a redirect to another origin, and on a retry a redirect moved there), ``ImageCredentialScope`` (whose image a request asks for, with ``tokenFields``) | the fields a client sets to prove who it is: to the origin (`Authorization`, RFC 9110 §11.6.2; `Cookie`, RFC 6265 §5.4) or to a proxy (`Proxy-Authorization`, §11.7.2). A redirect removes only these: other fields may be what the next hop needs, and a browser or curl keeps them too |
/// | ``tokenFields`` | ``ImageCredentialScope`` (after ``requestFields``), ``redactedFields`` | custom fields that commonly carry a per-user token (API keys, session tokens, temporary AWS credentials): a server process fetching images for several users keys them per user. A redirect keeps them (an API may need its key on the next hop, and no standard says to drop them), and the HTTP cache needs no list (below) |
/// | ``userFields`` | ``CacheVary/impliedFieldNames(responseHeaders:)`` (what a response not marked `public` is keyed on beyond its `Vary`) | the fields that tell the origin which user asks. `Proxy-Authorization` is consumed by the proxy and never changes what the origin answers |
/// | ``redactedFields`` | ``ObservabilityRedaction/defaultSensitiveHeaders`` (values logged as `REDACTED`) | broader: hiding a value in a log costs nothing, so ``tokenFields`` (`X-Api-Key`, `X-Auth-Token`, `X-Amz-Security-Token`) and the response's `Set-Cookie` are hidden too |
///
/// The HTTP cache needs no list: a secondary key holds a digest of every value it keeps,
/// whatever the field (``CacheVary/secondaryKey(responseHeaders:requestHeaders:)``).
enum CredentialHeaders {
    /// `Authorization`, `Cookie`, `Proxy-Authorization`, in the order ``ImageCredentialScope``
    /// digests them (changing it changes every credential-scoped image key). Compared
    /// case-insensitively by their users.
    static let requestFields = ["Authorization", "Cookie", "Proxy-Authorization"]

    /// `X-Api-Key`, `X-Auth-Token`, `X-Amz-Security-Token`: common custom fields carrying a
    /// per-user token, in the order ``ImageCredentialScope`` digests them after
    /// ``requestFields``. Compared case-insensitively by their users.
    static let tokenFields = ["X-Api-Key", "X-Auth-Token", "X-Amz-Security-Token"]

    /// `authorization`, `cookie` (lowercased): the request fields naming the user at the origin.
    static let userFields = ["authorization", "cookie"]

    /// ``requestFields`` and ``tokenFields`` lowercased, plus `set-cookie`: the header fields
    /// whose values a log or a span never shows.
    static let redactedFields: Set<String> = Set((requestFields + tokenFields).map { $0.lowercased() }).union(["set-cookie"])
}
