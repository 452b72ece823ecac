import ArgumentParser

/// `courier-ws-bench`: WebSocket echo round trips and TLS openings, Courier's engine and session
/// against websocket-kit and Hummingbird's client, the echo server in a process of its own. See
/// Benchmarks/README.md.
@main
struct CourierWSBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "courier-ws-bench",
        abstract: "Measure Courier's WebSocket client against websocket-kit and Hummingbird (see Benchmarks/README.md).",
        subcommands: [Run.self, RunOne.self, Serve.self],
        defaultSubcommand: Run.self
    )
}
