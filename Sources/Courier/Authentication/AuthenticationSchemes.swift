/// The HTTP authentication schemes a session credential may answer
/// (``URLSessionManager/credentialSchemes``).
///
/// Digest sends a hash of the password bound to one nonce; Basic sends the password itself.
/// A credential restricted to ``digest`` is never sent as Basic: a server that offers only
/// Basic gets no answer, and its 401 is the task's result.
public struct AuthenticationSchemes: OptionSet, Sendable, Hashable {
    /// The set's bits (``basic`` is bit 0, ``digest`` bit 1).
    public let rawValue: Int

    /// Creates a set from its raw bits.
    public init(rawValue: Int) {
        self.rawValue = rawValue
    }

    /// `Basic` (RFC 7617): the password, base64-encoded, in every answer.
    public static let basic = AuthenticationSchemes(rawValue: 1 << 0)
    /// `Digest` (RFC 7616) with SHA-256 or MD5 and qop `auth`.
    public static let digest = AuthenticationSchemes(rawValue: 1 << 1)
    /// Both: the default. The strongest scheme the server offers is answered.
    public static let all: AuthenticationSchemes = [.basic, .digest]
}
