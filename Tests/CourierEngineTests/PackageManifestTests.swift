import Foundation
import Testing

/// The manifest's deployment targets are ones where every API the package uses exists:
/// `Synchronization.Mutex` needs macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2.
@Suite("Package manifest")
struct PackageManifestTests {
    @Test func platformsAreNewEnoughForMutex() throws {
        var directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        while !FileManager.default.fileExists(atPath: directory.appendingPathComponent("Package.swift").path),
            directory.pathComponents.count > 1 {
            directory.deleteLastPathComponent()
        }
        let manifest = directory.appendingPathComponent("Package.swift")
        let text = try String(contentsOf: manifest, encoding: .utf8)
        let line = try #require(text.split(separator: "\n").first { $0.contains("platforms:") }.map(String.init))
        for platform in [".macOS(.v15)", ".iOS(.v18)", ".tvOS(.v18)", ".watchOS(.v11)", ".visionOS(.v2)"] {
            #expect(line.contains(platform), "\(line)")
        }
    }
}
