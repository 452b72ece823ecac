import Courier
import Foundation

/// Joining a path onto a base URL (AFNetworking's `URLWithString:relativeToURL:` rules) for
/// arbitrary strings: never traps, and a result is always an absolute URL with a scheme.
enum BaseURLFuzzing {
    static func run(_ bytes: [UInt8]) {
        var input = FuzzInput(bytes)
        let base = input.string(maxLength: 64)
        let path = String(decoding: input.rest(), as: UTF8.self)
        let baseURL = URL(string: base)
        if let baseURL { _ = BaseURLResolution.normalizedBaseURL(baseURL) }
        if let resolved = BaseURLResolution.resolve(path, against: baseURL) {
            invariant(resolved.absoluteURL.scheme != nil || baseURL == nil || baseURL?.scheme == nil,
                      "resolved \(path.debugDescription) against \(base.debugDescription) to a URL without a scheme: \(resolved)")
        }
    }
}
