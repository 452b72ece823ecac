import ArgumentParser

/// `courier-serializer-bench`: Courier's serializers alone, without the network: query
/// strings, JSON parsing (against Foundation's parsers), multipart framing, percent-escaping.
/// See Benchmarks/README.md.
@main
struct SerializerBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "courier-serializer-bench",
        abstract: "Measure Courier's serializers without the network (see Benchmarks/README.md).",
        subcommands: [SerializerRun.self, SerializerRunOne.self],
        defaultSubcommand: SerializerRun.self
    )
}
