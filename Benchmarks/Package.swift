// swift-tools-version:6.0
import PackageDescription

// A separate package so that the peers used only for comparison (AsyncHTTPClient) never
// enter the library's dependency graph.
let package = Package(
    name: "CourierBenchmarks",
    platforms: [.macOS(.v14)],
    dependencies: [
        .package(name: "Courier", path: ".."),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/vapor/websocket-kit.git", from: "2.16.2"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket.git", from: "2.8.1"),
    ],
    targets: [
        // Shared by both harnesses: CPU and peak-RSS readings, machine load, child processes, the
        // interleaved rounds and their options, the table layout.
        .target(
            name: "BenchSupport",
            dependencies: [.product(name: "ArgumentParser", package: "swift-argument-parser")],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]
        ),
        .executableTarget(
            name: "courier-bench",
            dependencies: [
                "BenchSupport",
                .product(name: "Courier", package: "Courier"),
                .product(name: "CourierEngine", package: "Courier"),
                .product(name: "CourierTestServer", package: "Courier"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]
        ),
        // WebSocket echo round trips and TLS openings: Courier's engine and session against
        // websocket-kit and Hummingbird's WebSocket client, the server in its own process.
        .executableTarget(
            name: "courier-ws-bench",
            dependencies: [
                "BenchSupport",
                .product(name: "Courier", package: "Courier"),
                .product(name: "CourierEngine", package: "Courier"),
                .product(name: "CourierTestServer", package: "Courier"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "WebSocketKit", package: "websocket-kit"),
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
            ],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]
        ),
        // Connections: a Unix socket against loopback TCP (nginx), HTTP/2 coalescing against a
        // connection per name, and a gzip-compressed 256 MiB upload.
        .executableTarget(
            name: "courier-connections-bench",
            dependencies: [
                "BenchSupport",
                .product(name: "Courier", package: "Courier"),
                .product(name: "CourierEngine", package: "Courier"),
                .product(name: "CourierTestServer", package: "Courier"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]
        ),
        // The HTTP cache (issue 13): a cached small GET, memory and disk, against the network.
        .executableTarget(
            name: "courier-cache-bench",
            dependencies: [
                .product(name: "Courier", package: "Courier"),
                .product(name: "CourierEngine", package: "Courier"),
            ],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]
        ),
        // The cookie jar under a flood (storing 10,000, loading a 3,000-cookie session, lookups),
        // against HTTPie's cookie handling (scripts/cookie-flood.py) in the same run.
        .executableTarget(
            name: "courier-cookie-bench",
            dependencies: [
                .product(name: "Courier", package: "Courier"),
            ],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]
        ),
        // The serializers alone, no network: query strings, JSON parsing, multipart framing.
        .executableTarget(
            name: "courier-serializer-bench",
            dependencies: [
                "BenchSupport",
                .product(name: "Courier", package: "Courier"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
