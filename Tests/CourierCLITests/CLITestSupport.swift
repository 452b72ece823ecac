import Foundation

/// Where the built `courier` executable lives: beside the test bundle in the build products.
enum CourierBinary {
    /// The path of the `courier` binary built with the tests.
    static var url: URL {
        let products = Bundle.main.bundleURL
        let candidate = products.appendingPathComponent("courier")
        if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        return products.deletingLastPathComponent().appendingPathComponent("courier")
    }
}
