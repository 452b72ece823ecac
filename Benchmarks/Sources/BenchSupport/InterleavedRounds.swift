import Foundation

/// The rounds of one case that were accepted, with the machine's load during each.
public struct AcceptedRounds<Round> {
    /// The accepted rounds, in order.
    public var rounds: [Round] = []
    /// The share of the machine (all cores) other processes used during each accepted round.
    public var foreign: [Double] = []
    /// The share of the machine the host stole during each accepted round.
    public var steal: [Double] = []
    /// Rounds thrown away because other processes disturbed them.
    public var discarded = 0

    public init() {}
}

extension AcceptedRounds: Sendable where Round: Sendable {}

/// What one round shows in the progress log.
public struct RoundLog {
    /// One entry per client or variant, in order, e.g. "courier 123.4 MB/s".
    public var entries: [String]
    /// Appended to an accepted round's line (a unit shared by every entry), or empty.
    public var suffix: String
    /// Each failed check, already named after its client or variant.
    public var problems: [String]

    public init(entries: [String], suffix: String = "", problems: [String]) {
        self.entries = entries
        self.suffix = suffix
        self.problems = problems
    }
}

/// Measures rounds until `options.rounds` are accepted. Before each round it waits for a
/// quiet machine; a round during which other processes used more than
/// `options.busyThreshold` of the machine is discarded, at most `options.maxDiscards` times
/// per case (after that, disturbed rounds are accepted and the footnotes show the load).
///
/// - Parameters:
///   - options: Rounds, busy threshold, discards, quiet wait.
///   - companions: Processes of the benchmark that run beside the runner (a server in a
///     process of its own): their CPU is the benchmark's, not another process's.
///   - measure: Runs every client or variant once, in order.
///   - describe: What the round shows in the log.
public func measureRounds<Round>(
    _ options: RoundOptions,
    companions: [Int32] = [],
    measure: () async -> Round,
    describe: (Round) -> RoundLog
) async -> AcceptedRounds<Round> {
    var accepted = AcceptedRounds<Round>()
    while accepted.rounds.count < options.rounds {
        await waitForQuietMachine(options, companions: companions)
        let probe = ForeignLoadProbe(companions: companions)
        let round = await measure()
        let (foreign, steal) = probe.foreignShare()
        let description = describe(round)
        let line = description.entries.joined(separator: " | ")
        let load = String(format: "others used %.0f%% of the machine (steal %.0f%%)", foreign * 100, steal * 100)
        if foreign > options.busyThreshold, accepted.discarded < options.maxDiscards {
            accepted.discarded += 1
            log("  discarded a round: \(load) [\(line)]")
            continue
        }
        accepted.rounds.append(round)
        accepted.foreign.append(foreign)
        accepted.steal.append(steal)
        log("  round \(accepted.rounds.count): \(line)\(description.suffix); \(load)")
        for problem in description.problems { log("  PROBLEM \(problem)") }
    }
    return accepted
}

/// Waits, up to `options.quietWait` seconds, until no build runs and others use no more
/// than the busy threshold over one second; `companions` are the benchmark's own processes.
public func waitForQuietMachine(_ options: RoundOptions, companions: [Int32] = []) async {
    let deadline = ContinuousClock.now + .seconds(options.quietWait)
    var said = false
    while true {
        let builds = runningBuildProcesses()
        let probe = ForeignLoadProbe(companions: companions)
        try? await Task.sleep(for: .seconds(1))
        let (foreign, _) = probe.foreignShare()
        if builds.isEmpty, foreign <= options.busyThreshold { return }
        let named = builds.prefix(4).joined(separator: ", ")
        if ContinuousClock.now >= deadline {
            log("  machine still busy after \(Int(options.quietWait)) s (\(named)); going on, disturbed rounds will be discarded")
            return
        }
        if !said {
            log(String(format: "  waiting for a quiet machine: others use %.0f%%; builds: %@", foreign * 100, named))
            said = true
        }
        try? await Task.sleep(for: .seconds(2))
    }
}

/// "a–b%": the smallest and largest of `shares` (0...1) as whole percentages; "0–0%" when
/// empty.
public func percentRange(_ shares: [Double]) -> String {
    String(format: "%.0f–%.0f%%", (shares.min() ?? 0) * 100, (shares.max() ?? 0) * 100)
}
