/// Whether a request that failed on a connection may be sent again on a new one.
///
/// A keep-alive connection the server closed while it sat idle in the pool looks alive until
/// the next request is written to it: the request then fails before any response byte. Sent
/// again on a new connection, it succeeds. How safe that is depends on how far it got: a
/// request of which nothing was written can be replayed whatever its method; one that was
/// written may have been processed, so only an idempotent method may be replayed.
enum ReplayEligibility: Equatable, Sendable {
    /// The failure stands (a response had begun, or the connection was new).
    case none
    /// A reused connection died after the request was written and before any response byte:
    /// an idempotent request may be sent again.
    case ifIdempotent
    /// Nothing of the request was written (the connection was found closed first, or the
    /// write of its head failed; or an HTTP/2 server refused the stream unprocessed): any
    /// request may be sent again, if its body can be replayed.
    case unsent
}
