/// One run of a case.
enum Workload: Sendable, Equatable {
    /// `sockets` sockets at once, each sending `messageSize`-byte binary messages one at a time.
    case echo(sockets: Int, messageSize: Int)
    /// Sockets opened one after another by `route`, each making one 32-byte echo and closing.
    case open(OpeningRoute)
}
