import ArgumentParser

/// `courier-bench`: CourierEngine against AsyncHTTPClient and FoundationNetworking's
/// URLSession, on loopback. See Benchmarks/README.md.
@main
struct CourierBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "courier-bench",
        abstract: "Measure CourierEngine against AsyncHTTPClient and URLSession (see Benchmarks/README.md).",
        subcommands: [Run.self, RunOne.self, Soak.self, Scaling.self, HTTPSBench.self],
        defaultSubcommand: Run.self
    )
}
