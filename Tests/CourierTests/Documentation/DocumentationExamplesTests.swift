import Foundation
import Testing

/// Keeps the documentation's Swift examples honest: every ```swift block in README.md and in the
/// DocC catalogs (`Sources/*/*.docc/**/*.md`) must appear, line for line, in a Swift file under
/// `Tests/`, where a test compiles it and runs it against the in-process test server.
///
/// A block matches when its non-empty lines, trimmed of surrounding whitespace, appear in order
/// and contiguously among the non-empty trimmed lines of one test file. Examples read the server's
/// address from `server.baseURL`, so no line needs rewriting. Blocks that are not meant to compile
/// (shell sessions, signatures, output) use another fence language: ```sh, ```text, ```console.
@Suite("Documentation examples")
struct DocumentationExamplesTests {
    /// One fenced Swift block: where it starts and its non-empty trimmed lines.
    struct Block: CustomStringConvertible {
        let file: String
        let line: Int
        let lines: [String]
        var description: String { "\(file):\(line)" }
    }

    @Test("every Swift block in README.md and the DocC articles is compiled by a test")
    func everySwiftBlockIsInATest() throws {
        let root = try Self.repositoryRoot()
        let documents = try Self.documentationFiles(under: root)
        #expect(documents.contains { $0.hasSuffix("README.md") })
        #expect(documents.contains { $0.hasSuffix("Courier.docc/Courier.md") })
        #expect(documents.contains { $0.hasSuffix("CourierEngine.docc/CourierEngine.md") })

        var blocks: [Block] = []
        for document in documents {
            let text = try String(contentsOfFile: root + "/" + document, encoding: .utf8)
            blocks += Self.swiftBlocks(in: text, file: document)
        }
        // The README's tour and the articles hold dozens; a parser that found none proves nothing.
        #expect(blocks.count >= 20, "found only \(blocks.count) Swift blocks")

        let testFiles = try Self.swiftFiles(under: root + "/Tests").map { path in
            try String(contentsOfFile: path, encoding: .utf8)
                .split(separator: "\n", omittingEmptySubsequences: false)
                .map { $0.trimmingCharacters(in: .whitespaces) }
                .filter { !$0.isEmpty }
        }
        for block in blocks {
            #expect(!block.lines.isEmpty, "\(block) is an empty Swift block")
            let found = testFiles.contains { Self.contains($0, contiguous: block.lines) }
            #expect(found, "\(block): this Swift block appears in no test file; copy it into a test that runs it (first line: \(block.lines.first ?? ""))")
        }
    }

    @Test("the documentation tells no project history")
    func noProjectHistory() throws {
        let root = try Self.repositoryRoot()
        let history = try Regex(#"\((issue|session|PR) #?[0-9]+\)|\b(issue|session) #?[0-9]+\b|issue[0-9]+-"#)
        for document in try Self.documentationFiles(under: root) {
            let text = try String(contentsOfFile: root + "/" + document, encoding: .utf8)
            for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                #expect(line.firstMatch(of: history) == nil, "\(document):\(number + 1) tells project history: \(line)")
            }
        }
    }

    @Test("the README's relative links name files that exist")
    func readmeLinksResolve() throws {
        let root = try Self.repositoryRoot()
        let readme = try String(contentsOfFile: root + "/README.md", encoding: .utf8)
        let link = try Regex(#"\]\(([^)#:]+)(#[^)]*)?\)"#)
        var count = 0
        for match in readme.matches(of: link) {
            guard let target = match.output[1].substring else { continue }
            count += 1
            #expect(FileManager.default.fileExists(atPath: root + "/" + target), "README links to \(target), which does not exist")
        }
        #expect(count > 10, "the README should link the articles")
    }

    @Test("the block parser and matcher")
    func parserAndMatcher() {
        let text = """
            Intro.
            ```swift
              let a = 1

              print(a)
            ```
            ```sh
            swift build
            ```
            """
        let blocks = Self.swiftBlocks(in: text, file: "x.md")
        #expect(blocks.count == 1)
        #expect(blocks.first?.lines == ["let a = 1", "print(a)"])
        #expect(blocks.first?.line == 2)
        #expect(Self.contains(["x", "let a = 1", "print(a)", "y"], contiguous: ["let a = 1", "print(a)"]))
        #expect(!Self.contains(["let a = 1", "z", "print(a)"], contiguous: ["let a = 1", "print(a)"]))
        #expect(!Self.contains(["let a = 1"], contiguous: ["let a = 1", "print(a)"]))
    }

    // MARK: - Helpers

    /// The folder holding Package.swift, found by walking up from this file.
    static func repositoryRoot(from file: String = #filePath) throws -> String {
        var directory = URL(fileURLWithPath: file).deletingLastPathComponent()
        while directory.path != "/" {
            if FileManager.default.fileExists(atPath: directory.appendingPathComponent("Package.swift").path) {
                return directory.path
            }
            directory = directory.deletingLastPathComponent()
        }
        throw RootNotFound(file: file)
    }

    struct RootNotFound: Error { let file: String }

    /// README.md and every Markdown file of every DocC catalog, relative to `root`, sorted.
    static func documentationFiles(under root: String) throws -> [String] {
        var files = ["README.md"]
        let sources = root + "/Sources"
        for module in try FileManager.default.contentsOfDirectory(atPath: sources).sorted() {
            let moduleFolder = sources + "/" + module
            for entry in try FileManager.default.contentsOfDirectory(atPath: moduleFolder).sorted() where entry.hasSuffix(".docc") {
                let catalog = moduleFolder + "/" + entry
                guard let walker = FileManager.default.enumerator(atPath: catalog) else { continue }
                for case let path as String in walker where path.hasSuffix(".md") {
                    files.append("Sources/\(module)/\(entry)/\(path)")
                }
            }
        }
        return files.sorted()
    }

    /// Every `.swift` file under `folder`, as absolute paths.
    static func swiftFiles(under folder: String) throws -> [String] {
        guard let walker = FileManager.default.enumerator(atPath: folder) else { return [] }
        var files: [String] = []
        for case let path as String in walker where path.hasSuffix(".swift") {
            files.append(folder + "/" + path)
        }
        return files
    }

    /// The ```swift blocks of a Markdown text, each as its non-empty lines trimmed of whitespace.
    static func swiftBlocks(in text: String, file: String) -> [Block] {
        var blocks: [Block] = []
        var current: (line: Int, lines: [String])?
        for (index, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = rawLine.trimmingCharacters(in: .whitespaces)
            if var open = current {
                if line.hasPrefix("```") {
                    blocks.append(Block(file: file, line: open.line, lines: open.lines))
                    current = nil
                } else if !line.isEmpty {
                    open.lines.append(line)
                    current = open
                }
            } else if line.hasPrefix("```swift") {
                current = (index + 1, [])
            }
        }
        return blocks
    }

    /// Whether `needle` occurs in `haystack` as a contiguous run.
    static func contains(_ haystack: [String], contiguous needle: [String]) -> Bool {
        guard !needle.isEmpty, needle.count <= haystack.count else { return false }
        for start in 0...(haystack.count - needle.count) where haystack[start] == needle[0] {
            if haystack[start..<(start + needle.count)].elementsEqual(needle) { return true }
        }
        return false
    }
}
