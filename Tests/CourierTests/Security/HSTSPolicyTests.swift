@testable import Courier
import Foundation
import Testing

/// HSTS's pure rules (RFC 6797): the header grammar, known hosts and subdomains, expiry,
/// upgrades and ports, eviction, and curl's file format. No clock, no network.
@Suite("HSTS policy")
struct HSTSPolicyTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    // MARK: - Header (§6.1)

    @Test func parsesMaxAgeAndIncludeSubDomains() {
        #expect(StrictTransportSecurityHeader.parse("max-age=31536000") == .init(maxAge: 31_536_000, includesSubdomains: false))
        #expect(
            StrictTransportSecurityHeader.parse("max-age=600; includeSubDomains")
                == .init(maxAge: 600, includesSubdomains: true))
        #expect(
            StrictTransportSecurityHeader.parse("  INCLUDESUBDOMAINS ;MAX-AGE=\"42\"; preload")
                == .init(maxAge: 42, includesSubdomains: true))
        #expect(StrictTransportSecurityHeader.parse("max-age=0")?.maxAge == 0)
        #expect(StrictTransportSecurityHeader.parse("max-age=10;;") == .init(maxAge: 10, includesSubdomains: false))
        #expect(StrictTransportSecurityHeader.parse("max-age=99999999999999999999999")?.maxAge == StrictTransportSecurityHeader.maximumAge)
        #expect(StrictTransportSecurityHeader.parse("unknown=\"a;b\"; max-age=5")?.maxAge == 5)
    }

    @Test func refusesMalformedAndDuplicateDirectives() {
        for value in [
            "", "includeSubDomains", "max-age", "max-age=", "max-age=-1", "max-age=1.5", "max-age=abc", "max-age=\"12",
            "max-age=1; max-age=2", "max-age=1; includeSubDomains; includesubdomains", "max-age=1; includeSubDomains=yes",
            "max-age=1; bad name=1", "max-age=1; x=\"a\"b\"",
        ] {
            #expect(StrictTransportSecurityHeader.parse(value) == nil, "\(value.debugDescription)")
        }
    }

    // MARK: - Known hosts (§8.1, §8.2)

    static func header(_ value: String) -> StrictTransportSecurityHeader {
        StrictTransportSecurityHeader.parse(value) ?? StrictTransportSecurityHeader(maxAge: -1, includesSubdomains: false)
    }

    @Test func knownHostsAndSubdomains() {
        var table = HSTSPolicyTable(maximumEntries: 100)
        let noted = table.note(Self.header("max-age=100"), host: "Example.COM.", now: Self.now)
        #expect(noted)
        #expect(table.isKnownHost("example.com", now: Self.now))
        #expect(!table.isKnownHost("www.example.com", now: Self.now))  // no includeSubDomains
        #expect(!table.isKnownHost("notexample.com", now: Self.now))
        table.note(Self.header("max-age=100; includeSubDomains"), host: "corp.test", now: Self.now)
        #expect(table.isKnownHost("a.b.corp.test", now: Self.now))
        #expect(table.isKnownHost("CORP.test", now: Self.now))
        #expect(!table.isKnownHost("xcorp.test", now: Self.now))
    }

    @Test func ipAddressesAreNeverNotedOrMatched() {
        var table = HSTSPolicyTable(maximumEntries: 100)
        for host in ["127.0.0.1", "::1", "[::1]", "2130706433", "0x7f.1"] {
            let noted = table.note(Self.header("max-age=100"), host: host, now: Self.now)
            #expect(!noted, "\(host)")
            #expect(!table.isKnownHost(host, now: Self.now))
        }
        #expect(table.count == 0)
    }

    @Test func maxAgeZeroForgetsAndEntriesExpire() {
        var table = HSTSPolicyTable(maximumEntries: 100)
        table.note(Self.header("max-age=100"), host: "example.com", now: Self.now)
        #expect(table.isKnownHost("example.com", now: Self.now.addingTimeInterval(99)))
        #expect(!table.isKnownHost("example.com", now: Self.now.addingTimeInterval(100)))
        let forgot = table.note(Self.header("max-age=0"), host: "example.com", now: Self.now)
        #expect(forgot)
        #expect(!table.isKnownHost("example.com", now: Self.now))
        #expect(table.count == 0)
    }

    @Test func upgradeKeepsAnExplicitPortAndDropsPort80() throws {
        var table = HSTSPolicyTable(maximumEntries: 100)
        table.note(Self.header("max-age=100"), host: "example.com", now: Self.now)
        func upgraded(_ text: String) throws -> String? {
            try table.upgradedURL(for: #require(URL(string: text)), now: Self.now)?.absoluteString
        }
        #expect(try upgraded("http://example.com/a?b=1#c") == "https://example.com/a?b=1#c")
        #expect(try upgraded("http://example.com:80/a") == "https://example.com/a")
        #expect(try upgraded("http://example.com:8080/a") == "https://example.com:8080/a")
        #expect(try upgraded("ws://example.com/socket") == "wss://example.com/socket")
        #expect(try upgraded("http://user:pw@EXAMPLE.com./x") == "https://user:pw@EXAMPLE.com./x")
        #expect(try upgraded("https://example.com/") == nil)
        #expect(try upgraded("http://other.com/") == nil)
        #expect(try upgraded("http://example.com/later") != nil)
        #expect(try table.upgradedURL(for: #require(URL(string: "http://example.com/")), now: Self.now.addingTimeInterval(200)) == nil)
    }

    @Test func evictsExpiredThenSoonestToExpire() {
        var table = HSTSPolicyTable(maximumEntries: 2)
        table.note(Self.header("max-age=300"), host: "long.test", now: Self.now)
        table.note(Self.header("max-age=100"), host: "short.test", now: Self.now)
        table.note(Self.header("max-age=200"), host: "middle.test", now: Self.now)
        #expect(table.count == 2)
        #expect(!table.isKnownHost("short.test", now: Self.now))
        #expect(table.isKnownHost("long.test", now: Self.now) && table.isKnownHost("middle.test", now: Self.now))
        // The entry just stored stays even when it expires first.
        table.note(Self.header("max-age=1"), host: "newest.test", now: Self.now)
        #expect(table.isKnownHost("newest.test", now: Self.now))
        #expect(table.count == 2)
    }

    @Test func evictionLeavesATenthOfTheCapFree() {
        var table = HSTSPolicyTable(maximumEntries: 20)
        for index in 0..<21 {
            table.note(Self.header("max-age=\(100 + index)"), host: "h\(index).test", now: Self.now)
        }
        #expect(table.count == 18)
        #expect(!table.isKnownHost("h2.test", now: Self.now) && table.isKnownHost("h3.test", now: Self.now))
        #expect(table.isKnownHost("h20.test", now: Self.now))
    }

    @Test func aHugeFileLoadsBoundedKeepingTheLongestLived() throws {
        // 50,000 lines (a file grown by hand, or hostile) into a store of 100: one sort, not
        // 50,000; the entries that last longest stay.
        var text = ""
        for index in 0..<50_000 {
            text += "host\(index).test \"\(HSTSFile.stampText(Self.now.addingTimeInterval(TimeInterval(1_000 + index))))\"\n"
        }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("hsts-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("hsts.txt")
        try Data(text.utf8).write(to: file)
        let store = try HSTSStore(contentsOf: file, maximumEntries: 100, clock: { Self.now })
        let entries = store.entries
        #expect(entries.count == 90)
        #expect(entries.allSatisfy { Int($0.host.dropFirst(4).dropLast(5)) ?? 0 >= 49_910 })
    }

    // MARK: - The store

    @Test func storeLearnsOnlyOverHTTPSAndOnlyFromTheFirstField() throws {
        let store = HSTSStore(clock: { Self.now })
        #expect(!store.noteResponse(strictTransportSecurity: ["max-age=100"], for: try #require(URL(string: "http://plain.test/"))))
        #expect(!store.isKnownHost("plain.test"))
        #expect(
            !store.noteResponse(
                strictTransportSecurity: ["max-age=bad", "max-age=100"], for: try #require(URL(string: "https://first.test/"))))
        #expect(store.noteResponse(strictTransportSecurity: ["max-age=100"], for: try #require(URL(string: "https://secure.test:8443/"))))
        #expect(store.isKnownHost("secure.test"))
        #expect(!store.noteResponse(strictTransportSecurity: ["max-age=100"], for: try #require(URL(string: "https://127.0.0.1/"))))
        #expect(store.entries.map(\.host) == ["secure.test"])
    }

    // MARK: - curl's file format

    @Test func fileFormatRoundTripsAndSkipsBadLines() throws {
        let text = """
            # Your HSTS cache. https://curl.se/docs/hsts.html
            .example.com "20271208 12:00:00"
            api.example.org "unlimited"
            broken line
            127.0.0.1 "20271208 12:00:00"
            bad.date "2027-12-08"
            month.bad "20271308 12:00:00"

            """
        let entries = HSTSFile.entries(in: text)
        #expect(entries.count == 2)
        #expect(entries.first == HSTSStore.Entry(
            host: "example.com", includesSubdomains: true, expiresDate: HSTSFile.date(from: "20271208 12:00:00")))
        #expect(entries.last == HSTSStore.Entry(host: "api.example.org", includesSubdomains: false, expiresDate: nil))
        #expect(HSTSFile.stampText(try #require(HSTSFile.date(from: "20271208 12:00:07"))) == "20271208 12:00:07")
        #expect(HSTSFile.entries(in: HSTSFile.text(for: entries)) == entries.sorted { $0.host < $1.host })
    }

    @Test func storePersistsAtomicallyAndReloadsBounded() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("hsts-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("hsts.txt")
        let missing = try HSTSStore(contentsOf: file, clock: { Self.now })  // no file: empty
        #expect(missing.entries.isEmpty)

        let store = HSTSStore(clock: { Self.now })
        for index in 0..<5 {
            store.noteResponse(
                strictTransportSecurity: ["max-age=\(1000 + index); includeSubDomains"], for: try #require(URL(string: "https://h\(index).test/")))
        }
        try store.write(to: file)
        // Only the file is left: the temporary one was renamed over it.
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["hsts.txt"])
        let reloaded = try HSTSStore(contentsOf: file, clock: { Self.now })
        #expect(reloaded.entries.map(\.host) == ["h0.test", "h1.test", "h2.test", "h3.test", "h4.test"])
        #expect(reloaded.isKnownHost("www.h3.test"))
        // A smaller store keeps the entries that last longest.
        let bounded = try HSTSStore(contentsOf: file, maximumEntries: 2, clock: { Self.now })
        #expect(bounded.entries.map(\.host) == ["h3.test", "h4.test"])
        // Expired entries are not loaded.
        let later = try HSTSStore(contentsOf: file, clock: { Self.now.addingTimeInterval(1002.5) })
        #expect(later.entries.map(\.host) == ["h3.test", "h4.test"])
    }

    @Test func unreadableFileIsAClearError() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("hsts-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        #expect {
            _ = try HSTSStore(contentsOf: folder)
        } throws: { error in
            guard case .hstsFileFailed(let path, let reason) = error as? CourierError else { return false }
            return path == folder.path && reason == "not a regular file"
        }
    }
}
