import CourierTestServer
import Foundation
import Testing

/// What `import Courier` puts in a user's namespace, checked by the compiler itself: the
/// engine vocabulary that Courier's signatures use is there, the engine itself (`HTTPEngine`,
/// `EngineRequest`, `EngineEvent`, its responses) is not, and `import CourierEngine` brings it.
/// Each case type-checks a small file with `swiftc` against the modules this test was built with.
@Suite("import Courier's surface")
struct ImportSurfaceTests {
    /// The folder of the build's `.swiftmodule` files and its C module maps, found from the
    /// test bundle's own location.
    static let buildDirectory: URL? = {
        var directory = Bundle.main.bundleURL
        for _ in 0..<3 {
            if FileManager.default.fileExists(atPath: directory.appendingPathComponent("Modules/Courier.swiftmodule").path) {
                return directory
            }
            directory.deleteLastPathComponent()
        }
        return nil
    }()

    static let swiftc: String? = ["/opt/swift/usr/bin/swiftc", "/usr/bin/swiftc", "/usr/local/bin/swiftc"]
        .first { FileManager.default.isExecutableFile(atPath: $0) }

    static var canTypeCheck: Bool { buildDirectory != nil && swiftc != nil }

    /// Type-checks `source`; returns swiftc's exit status and its diagnostics.
    static func typeCheck(_ source: String) throws -> (status: Int32, diagnostics: String) {
        guard let buildDirectory, let swiftc else { throw CheckUnavailable() }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("courier-surface-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("main.swift")
        try Data(source.utf8).write(to: file)
        var arguments = ["-typecheck", "-I", buildDirectory.appendingPathComponent("Modules").path]
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: buildDirectory.path)) ?? []
        for entry in entries where entry.hasSuffix(".build") {
            let map = buildDirectory.appendingPathComponent(entry).appendingPathComponent("module.modulemap")
            if FileManager.default.fileExists(atPath: map.path) { arguments += ["-Xcc", "-fmodule-map-file=\(map.path)"] }
        }
        let checkouts = buildDirectory.deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("checkouts")
        for package in (try? FileManager.default.contentsOfDirectory(atPath: checkouts.path)) ?? [] {
            let sources = checkouts.appendingPathComponent(package).appendingPathComponent("Sources")
            for target in (try? FileManager.default.contentsOfDirectory(atPath: sources.path)) ?? [] {
                let include = sources.appendingPathComponent(target).appendingPathComponent("include")
                if FileManager.default.fileExists(atPath: include.path) { arguments += ["-Xcc", "-I\(include.path)"] }
            }
        }
        arguments.append(file.path)
        let run = try ProcessLauncher.runToEnd(swiftc, arguments, includingStandardError: true)
        return (run.status, String(decoding: run.output, as: UTF8.self))
    }

    struct CheckUnavailable: Error {}

    @Test(.enabled(if: canTypeCheck, "swiftc or the build's modules were not found"))
    func theVocabularyComesWithImportCourier() throws {
        let result = try Self.typeCheck(
            """
            import Courier
            import Foundation
            let metrics: EngineMetrics? = nil
            var configuration = SessionConfiguration()
            configuration.tls = EngineTLSConfiguration()
            configuration.proxy = EngineProxy(host: "proxy.example", port: 3128)
            configuration.proxyEnvironment = ProxyEnvironment()
            configuration.httpVersion = EngineConfiguration.HTTPVersionPolicy.automatic
            configuration.unixSocketPaths = ["docker": "/var/run/docker.sock"]
            configuration.hostResolver = SystemHostResolver()
            configuration.resolveOverrides = [try ResolveOverride(parsing: "a.test:443:127.0.0.1")]
            configuration.connectToOverrides = [try ConnectToOverride(parsing: "a.test:443:b.test:8443")]
            let overrideError: HostOverrideError? = nil
            let resolver: (any HostResolver)? = nil
            print(overrideError as Any, resolver as Any)
            let body: RequestBody = .data(Data("x".utf8))
            let writer: ((BodyWriter) async throws -> Void)? = nil
            let error: EngineError? = nil
            let refusal: ProxyRefusal? = nil
            print(metrics as Any, body, writer as Any, error as Any, refusal as Any, URLSessionManager.self)
            """)
        #expect(result.status == 0, "\(result.diagnostics)")
    }

    @Test(.enabled(if: canTypeCheck, "swiftc or the build's modules were not found"))
    func theEngineStaysBehindImportCourierEngine() throws {
        let engineNames = ["HTTPEngine", "EngineRequest", "EngineEvent", "CollectedResponse", "StreamedResponse"]
        let hidden = try Self.typeCheck("import Courier\n" + engineNames.map { "let _ = \($0).self" }.joined(separator: "\n"))
        #expect(hidden.status != 0)
        for name in engineNames {
            #expect(hidden.diagnostics.contains("cannot find '\(name)' in scope"), "\(name): \(hidden.diagnostics)")
        }
        let imported = try Self.typeCheck(
            "import Courier\nimport CourierEngine\n" + engineNames.map { "let _ = \($0).self" }.joined(separator: "\n"))
        #expect(imported.status == 0, "\(imported.diagnostics)")
    }
}
