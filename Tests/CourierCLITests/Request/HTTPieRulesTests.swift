import Foundation
import Testing

@testable import courier

/// The pure rules behind the HTTPie options, tested with plain values.
@Suite("courier's HTTPie rules")
struct HTTPieRulesTests {
    @Test func orderedJSONKeepsTypedOrderAndEscapes() {
        let members: [OrderedJSONBody.Member] = [
            .init(name: "z", json: OrderedJSONBody.quoted("1")), .init(name: "a", json: "2"),
            .init(name: "z", json: OrderedJSONBody.quoted("last")),
        ]
        #expect(OrderedJSONBody.encode(members) == #"{"z":"last","a":2}"#)
        #expect(OrderedJSONBody.encode([]) == "{}")
        #expect(OrderedJSONBody.quoted("a\"b\\c\nd\u{1}é/") == #""a\"b\\c\nd\u0001é/""#)
        #expect(OrderedJSONBody.compactRawJSON(#" { "y" : 1 , "x" : [ 2 , "a b" ] } "#) == #"{"y":1,"x":[2,"a b"]}"#)
        #expect(OrderedJSONBody.compactRawJSON(#""say \"hi \" ""#) == #""say \"hi \" ""#)
        #expect(OrderedJSONBody.compactRawJSON("{nope") == nil)
    }

    @Test func stdinIsABodyOnlyWhenPipedOrAFile() {
        #expect(StandardInputBody.isUsed(kind: .pipe, ignored: false))
        #expect(StandardInputBody.isUsed(kind: .regularFile, ignored: false))
        #expect(!StandardInputBody.isUsed(kind: .pipe, ignored: true))
        #expect(!StandardInputBody.isUsed(kind: .terminal, ignored: false))
        #expect(!StandardInputBody.isUsed(kind: .other, ignored: false))
    }

    @Test func defaultOptionsGoBeforeTheTypedOnesOfARequestOnly() {
        let others: Set<String> = ["serve", "demo", "bench"]
        #expect(ConfigFile.arguments([":8080/get"], defaults: ["--verify=no"], https: false, otherSubcommands: others)
            == ["--verify=no", ":8080/get"])
        #expect(ConfigFile.arguments(["request", "x"], defaults: ["-v"], https: true, otherSubcommands: others)
            == ["request", "-v", "--https", "x"])
        #expect(ConfigFile.arguments(["serve", "--port", "1"], defaults: ["-v"], https: true, otherSubcommands: others)
            == ["serve", "--port", "1"])
        #expect(ConfigFile.arguments(["--help"], defaults: ["-v"], https: false, otherSubcommands: others) == ["--help"])
        #expect(ConfigFile.arguments(["x"], defaults: [], https: false, otherSubcommands: others) == ["x"])
    }

    @Test func markupGetsColoursAndKeepsItsText() {
        let xml = #"<?xml version="1.0"?><!-- c --><a href='x' b="y">t &amp; <b/></a> 1 < 2"#
        let colored = MarkupFormatter.colorize(xml)
        let plain = colored.replacingOccurrences(of: "\u{1B}\\[[0-9;]*m", with: "", options: .regularExpression)
        #expect(plain == xml)
        #expect(colored.contains("\u{1B}[34ma\u{1B}[0m"))
        #expect(colored.contains("\u{1B}[36mhref\u{1B}[0m=\u{1B}[33m'x'\u{1B}[0m"))
        #expect(colored.contains("\u{1B}[90m<!-- c -->\u{1B}[0m"))
        #expect(MarkupFormatter.looksLikeMarkup("  \n<html>") && !MarkupFormatter.looksLikeMarkup("{\"a\":1}"))
    }

    @Test func streamedLinesAreFormattedOneByOneAndOtherTextPassesAtOnce() {
        var options = PrintOptions()
        options.format = true
        var lines = LineFormatter(printer: ExchangePrinter(options: options))
        #expect(lines.take(Data("**".utf8)) == Data("**".utf8))
        // The rest of that line belongs to it (`**{"a":1}` is not JSON): it passes as it comes,
        // so the output doesn't depend on where chunks split (an SSE `data: ` line, say).
        #expect(lines.take(Data(#"{"a":"#.utf8)) == Data(#"{"a":"#.utf8))
        #expect(String(decoding: lines.take(Data("1}\n{\"a\":".utf8)), as: UTF8.self) == "1}\n")
        // A line that starts like JSON is held to its newline and formatted.
        #expect(String(decoding: lines.take(Data("1}\n[".utf8)), as: UTF8.self) == "{\n    \"a\": 1\n}\n")
        #expect(String(decoding: lines.finish(), as: UTF8.self) == "[")
    }

    @Test func configDirectoryFollowsTheEnvironment() {
        #expect(ConfigFile.directory(environment: ["COURIER_CONFIG_DIR": "/c", "XDG_CONFIG_HOME": "/x"]).path == "/c")
        #expect(ConfigFile.directory(environment: ["XDG_CONFIG_HOME": "/x", "HOME": "/h"]).path == "/x/courier")
        #expect(ConfigFile.directory(environment: ["XDG_CONFIG_HOME": "relative", "HOME": "/h"]).path == "/h/.config/courier")
    }

    @Test func pemBlocksAreReadInOrder() {
        let pem = "junk\n-----BEGIN CERTIFICATE-----\nAQID\n-----END CERTIFICATE-----\n-----BEGIN PRIVATE KEY-----\nBAU=\n-----END PRIVATE KEY-----\n"
        #expect(ClientCertificate.pemBlocks(pem) == [
            .init(type: "CERTIFICATE", der: [1, 2, 3]), .init(type: "PRIVATE KEY", der: [4, 5]),
        ])
    }
}
