@testable import Courier
import Foundation
import Testing

/// A hostile public suffix list file: huge lines, bare markers, bad bytes, a top-level exception.
@Suite struct HostilePublicSuffixListTests {
    @Test func bareMarkersAndHugeLinesAreSkipped() throws {
        let list = try PublicSuffixList(text: "*.\n!\n*\n!*.\n" + String(repeating: "a", count: 1 << 20) + "\ncom\n")
        #expect(list.isPublicSuffix("com"))
        #expect(list.registrableDomain(of: "www.example.com") == "example.com")
        #expect(throws: PublicSuffixList.LoadError.self) { try PublicSuffixList(text: "*.\n!\n//x\n") }
    }

    @Test func aFileThatIsNotUTF8IsAClearError() throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("psl-\(UUID().uuidString).dat")
        try Data([0x63, 0x6F, 0x6D, 0x0A, 0xFF, 0xFE, 0xC3, 0x0A]).write(to: url)
        defer { try? FileManager.default.removeItem(at: url) }
        #expect(throws: PublicSuffixList.LoadError.self) { try PublicSuffixList(contentsOf: url) }
    }

    @Test func aTopLevelExceptionStillLeavesAOneLabelSuffix() throws {
        let list = try PublicSuffixList(text: "!com\n")
        #expect(list.publicSuffix(of: "com") == "com")
        #expect(list.publicSuffix(of: "www.example.com") == "com")
    }
}
