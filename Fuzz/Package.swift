// swift-tools-version:6.0
// libFuzzer targets for Courier's parsers. A package of its own (like Benchmarks/) so that the
// fuzzer build (libFuzzer coverage and AddressSanitizer, its own scratch path) never touches the
// main build. Run one target with `scripts/fuzz.sh TARGET SECONDS` from the repository root.
import PackageDescription

let package = Package(
    name: "CourierFuzz",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "Courier", path: ".."),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.2"),
    ],
    targets: [
        .executableTarget(
            name: "courier-fuzz",
            dependencies: [
                .product(name: "Courier", package: "Courier"),
                .product(name: "CourierEngine", package: "Courier"),
                .product(name: "CourierTestServer", package: "Courier"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTPCompression", package: "swift-nio-extras"),
            ]
        )
    ],
    swiftLanguageModes: [.v6]
)
