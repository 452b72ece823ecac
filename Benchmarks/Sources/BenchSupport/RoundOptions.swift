public import ArgumentParser

/// The options both harnesses share for their interleaved rounds: how many rounds to accept,
/// and when a round counts as disturbed by other processes.
public struct RoundOptions: ParsableArguments, Sendable {
    @Option(help: "Accepted rounds per case (each round measures every selected client or variant once, in order).")
    public var rounds = 3
    @Option(help: "Discard a round when processes outside the benchmark used more than this share of the machine.")
    public var busyThreshold = 0.10
    @Option(help: "Discard at most this many rounds per case (then accept and say so).")
    public var maxDiscards = 6
    @Option(help: "Before each round, wait up to this many seconds for the machine to be quiet.")
    public var quietWait: Double = 180

    public init() {}

    public func validate() throws {
        guard rounds >= 1 else { throw ValidationError("--rounds must be at least 1") }
    }
}
