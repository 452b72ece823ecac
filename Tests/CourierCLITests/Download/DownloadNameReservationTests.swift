import Foundation
import Testing

@testable import courier

/// `--download` without `-o` picks `name`, `name-1`, ... in the current directory. The name is
/// taken when the download ends (the library then renames the finished file onto it, replacing a
/// regular file): two couriers ending at the same moment must not pick the same name, or the
/// second rename overwrites the first one's file.
@Suite("courier download name reservation")
struct DownloadNameReservationTests {
    @Test("two downloads ending together get two names; each is taken at once")
    func twoPicksOfOneNameGetTwoFiles() throws {
        let folder = try CourierProcess.temporaryDirectory()
        // As two processes would: each picks before either has renamed anything onto its pick.
        let first = DownloadFlow.uniqueURL(for: "report.pdf", in: folder)
        let second = DownloadFlow.uniqueURL(for: "report.pdf", in: folder)
        #expect(first.lastPathComponent == "report.pdf")
        #expect(second.lastPathComponent == "report.pdf-1", "both picked \(first.lastPathComponent): the second rename replaces the first file")
        #expect(FileManager.default.fileExists(atPath: first.path), "the pick is not held until the rename")
        #expect(FileManager.default.fileExists(atPath: second.path))
    }

    @Test("an existing file, folder or dangling link is never picked")
    func existingEntriesAreSkipped() throws {
        let folder = try CourierProcess.temporaryDirectory()
        try Data("keep".utf8).write(to: folder.appendingPathComponent("a"))
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("a-1"), withIntermediateDirectories: false)
        try FileManager.default.createSymbolicLink(atPath: folder.appendingPathComponent("a-2").path, withDestinationPath: "/nonexistent/target")
        let pick = DownloadFlow.uniqueURL(for: "a", in: folder)
        #expect(pick.lastPathComponent == "a-3")
        #expect(try String(contentsOf: folder.appendingPathComponent("a"), encoding: .utf8) == "keep")
    }

    @Test("an unused placeholder is removed; a file with bytes is kept")
    func anUnusedPlaceholderIsRemoved() throws {
        let folder = try CourierProcess.temporaryDirectory()
        let pick = DownloadFlow.uniqueURL(for: "x", in: folder)
        DownloadFlow.removeUnusedPlaceholder(pick)
        #expect(!FileManager.default.fileExists(atPath: pick.path))
        let filled = DownloadFlow.uniqueURL(for: "y", in: folder)
        try Data("bytes".utf8).write(to: filled)
        DownloadFlow.removeUnusedPlaceholder(filled)
        #expect(FileManager.default.fileExists(atPath: filled.path))
    }
}
