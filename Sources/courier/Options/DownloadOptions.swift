import ArgumentParser

/// HTTPie's download options (`--download`, `--output`, `--continue`).
struct DownloadOptions: ParsableArguments {
    @Flag(name: [.customShort("d"), .long], help: "Save the body to a file, with a progress bar on stderr.")
    var download = false

    @Option(name: [.customShort("o"), .long], help: ArgumentHelp("With --download: the file to write.", valueName: "file"))
    var output: String?

    @Flag(name: [.customShort("c"), .customLong("continue")], help: "With --download -o: resume a partial file.")
    var resume = false

    /// - Throws: ``RequestBuildError`` when `--continue` or `--output` come without what they need.
    func checkCombination() throws {
        if resume && (!download || output == nil) {
            throw RequestBuildError(description: "--continue needs --download and -o FILE (the partial file to resume)")
        }
        if output != nil && !download {
            throw RequestBuildError(description: "-o/--output needs --download")
        }
    }
}
