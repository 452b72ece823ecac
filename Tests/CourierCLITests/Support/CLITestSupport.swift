import Foundation

/// Where the built `courier` executable lives: beside the test bundle in the build products,
/// or at `$COURIER_BINARY` when set (to run the suite against another build, say the one
/// before a fix).
enum CourierBinary {
    /// The path of the `courier` binary built with the tests.
    static var url: URL {
        if let path = ProcessInfo.processInfo.environment["COURIER_BINARY"], !path.isEmpty {
            return URL(fileURLWithPath: path)
        }
        let products = Bundle.main.bundleURL
        let candidate = products.appendingPathComponent("courier")
        if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        return products.deletingLastPathComponent().appendingPathComponent("courier")
    }
}

extension CourierBinary {
    /// The `courier-https` product in the build products (it runs the `courier` beside it, so
    /// `$COURIER_BINARY` does not change what it runs).
    static var httpsURL: URL {
        let products = Bundle.main.bundleURL
        let candidate = products.appendingPathComponent("courier-https")
        if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        return products.deletingLastPathComponent().appendingPathComponent("courier-https")
    }
}
