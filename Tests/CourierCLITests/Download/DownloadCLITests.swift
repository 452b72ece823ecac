import CourierTestServer
import Foundation
import Testing

/// `--download`, `-o` and `--continue`.
@Suite("courier download")
struct DownloadCLITests {
    /// The bytes `/range/{n}` and `/download/{n}` send: `abc…z` repeated.
    static func alphabet(_ count: Int) -> Data {
        let letters = Array("abcdefghijklmnopqrstuvwxyz".utf8)
        return Data((0..<count).map { letters[$0 % 26] })
    }

    @Test("--download -o FILE writes the body byte for byte; stdout stays empty; no bar when stderr is piped")
    func downloadToFile() async throws {
        let server = try await TestServer.start()
        defer { Task { try await server.shutdown() } }
        let directory = try CourierProcess.temporaryDirectory()
        let file = directory.appendingPathComponent("out.bin")
        let size = 3 * 1024 * 1024 + 17
        let run = try await CourierProcess.run(["--download", "-o", file.path, server.baseURL.absoluteString + "/download/\(size)"])
        #expect(run.status == 0, "\(run)")
        #expect(try Data(contentsOf: file) == Self.alphabet(size))
        #expect(run.stdout.isEmpty)
        #expect(run.errors.contains("HTTP/1.1 200 OK"), "\(run)")
        #expect(run.errors.contains("Done. 3.0 MiB in "), "\(run)")
        #expect(!run.errors.contains("\r"), "no progress bar redraws on a pipe: \(run)")
    }

    @Test("-d with data items sends the body: the server's echo of the POST lands in the file")
    func downloadSendsTheBody() async throws {
        let server = try await TestServer.start()
        defer { Task { try await server.shutdown() } }
        let directory = try CourierProcess.temporaryDirectory()
        let file = directory.appendingPathComponent("echo.json")
        let run = try await CourierProcess.run(["-d", "-o", file.path, "--form", "POST", server.baseURL.absoluteString + "/post", "a=1", "b=two"])
        #expect(run.status == 0, "\(run)")
        let echoed = try JSONSerialization.jsonObject(with: Data(contentsOf: file)) as? [String: Any]
        #expect(echoed?["form"] as? [String: String] == ["a": "1", "b": "two"], "\(run)")
    }

    @Test("without -o the file is named after the URL and an existing file is not overwritten")
    func downloadNamedAfterURL() async throws {
        let server = try await TestServer.start()
        defer { Task { try await server.shutdown() } }
        let directory = try CourierProcess.temporaryDirectory()
        try Data("keep me".utf8).write(to: directory.appendingPathComponent("5000"))
        let run = try await CourierProcess.run(["-d", server.baseURL.absoluteString + "/range/5000"], in: directory)
        #expect(run.status == 0, "\(run)")
        #expect(try Data(contentsOf: directory.appendingPathComponent("5000-1")) == Self.alphabet(5000))
        #expect(try Data(contentsOf: directory.appendingPathComponent("5000")) == Data("keep me".utf8))
    }

    @Test("--continue resumes a partial file with a Range request and ends byte-identical")
    func resume() async throws {
        let server = try await TestServer.start()
        defer { Task { try await server.shutdown() } }
        let directory = try CourierProcess.temporaryDirectory()
        let file = directory.appendingPathComponent("partial.bin")
        let size = 80_000
        try Self.alphabet(size).prefix(12_345).write(to: file)
        let run = try await CourierProcess.run([
            "--download", "--continue", "-o", file.path, server.baseURL.absoluteString + "/range/\(size)",
        ])
        #expect(run.status == 0, "\(run)")
        #expect(try Data(contentsOf: file) == Self.alphabet(size))
        // The server answered the Range request with the rest only.
        #expect(run.errors.contains("HTTP/1.1 206 Partial Content"), "\(run)")
        #expect(run.errors.contains("Content-Range: bytes 12345-79999/80000"), "\(run)")
        #expect(run.errors.contains("Resuming \(file.path) from byte 12345"), "\(run)")
    }

    @Test("--continue without -o is refused")
    func resumeNeedsOutput() async throws {
        let run = try await CourierProcess.run(["--download", "--continue", "http://127.0.0.1:9/range/10"])
        #expect(run.status == 2, "\(run)")
        #expect(run.errors.contains("--continue needs --download and -o FILE"), "\(run)")
    }

    @Test("an error status saves nothing and exits with the status class")
    func errorStatus() async throws {
        let server = try await TestServer.start()
        defer { Task { try await server.shutdown() } }
        let directory = try CourierProcess.temporaryDirectory()
        let file = directory.appendingPathComponent("missing.bin")
        let run = try await CourierProcess.run(["-d", "-o", file.path, server.baseURL.absoluteString + "/status/404"])
        #expect(run.status == 4, "\(run)")
        #expect(run.errors.contains("courier: error: HTTP 404 Not Found; nothing saved"), "\(run)")
        #expect(!FileManager.default.fileExists(atPath: file.path))
    }

    @Test("a 206 to a download that sent no Range is an error: nothing is saved as the file")
    func partialContentWithoutRangeIsRefused() async throws {
        let server = try await TestServer.start()
        defer { Task { try await server.shutdown() } }
        let directory = try CourierProcess.temporaryDirectory()
        let file = directory.appendingPathComponent("whole.bin")
        let run = try await CourierProcess.run([
            "-d", "-o", file.path, server.baseURL.absoluteString + "/range/100000?partial_without_range=10000",
        ])
        #expect(run.status == 1, "\(run)")
        #expect(run.errors.contains("206 Partial Content to a request for the whole file"), "\(run)")
        #expect(!FileManager.default.fileExists(atPath: file.path), "\(Self.contents(directory))")
    }

    /// The names in `directory`. A directory that can't be read gives a marker entry rather
    /// than `[]`, so a "nothing left behind" check can't pass because the folder vanished.
    static func contents(_ directory: URL) -> [String] {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory.path) else {
            return ["<cannot read \(directory.path)>"]
        }
        return names.sorted()
    }

    @Test("-o naming a directory is an error and nothing in it is deleted")
    func directoryOutputIsRefused() async throws {
        let server = try await TestServer.start()
        defer { Task { try await server.shutdown() } }
        let directory = try CourierProcess.temporaryDirectory()
        let target = directory.appendingPathComponent("folder")
        try FileManager.default.createDirectory(at: target, withIntermediateDirectories: true)
        try Data("keep".utf8).write(to: target.appendingPathComponent("keep.txt"))
        for output in [target.path, "."] {
            let run = try await CourierProcess.run(["-d", "-o", output, server.baseURL.absoluteString + "/range/5000"], in: target)
            #expect(run.status != 0, "\(run)")
            #expect(run.errors.contains("is a directory"), "\(run)")
            #expect(try Data(contentsOf: target.appendingPathComponent("keep.txt")) == Data("keep".utf8))
            #expect(Self.contents(target) == ["keep.txt"], "no partial or temporary file left: \(run)")
        }
    }

    @Test("-o in a missing folder is an error before anything is sent; no temporary file is left")
    func missingFolderOutputIsRefused() async throws {
        let work = try CourierProcess.temporaryDirectory()
        let file = work.appendingPathComponent("no/such/folder/out.bin")
        // Nothing listens on port 9: the check must come before connecting.
        let run = try await CourierProcess.run(["-d", "-o", file.path, "http://127.0.0.1:9/range/10"])
        #expect(run.status == 2, "\(run)")
        #expect(run.errors.contains("does not exist"), "\(run)")
        #expect(Self.contents(work) == [])
    }

    @Test("a download cut by a connection reset keeps FILE.part; --continue completes it byte-identical")
    func interruptedDownloadResumes() async throws {
        let server = try await TestServer.start()
        defer { Task { try await server.shutdown() } }
        let directory = try CourierProcess.temporaryDirectory()
        let file = directory.appendingPathComponent("big.bin")
        let part = directory.appendingPathComponent("big.bin.part")
        let size = 80_000
        let url = server.baseURL.absoluteString + "/range/\(size)"
        let cut = try await CourierProcess.run(["-d", "-o", file.path, url + "?reset_after=30000"])
        #expect(cut.status != 0, "\(cut)")
        #expect(!FileManager.default.fileExists(atPath: file.path))
        #expect(try Data(contentsOf: part) == Self.alphabet(30_000), "\(cut)")
        #expect(cut.errors.contains("--continue"), "the message says how to resume: \(cut)")

        let resumed = try await CourierProcess.run(["-d", "-c", "-o", file.path, url])
        #expect(resumed.status == 0, "\(resumed)")
        #expect(try Data(contentsOf: file) == Self.alphabet(size))
        #expect(!FileManager.default.fileExists(atPath: part.path))
        #expect(resumed.errors.contains("Content-Range: bytes 30000-79999/80000"), "\(resumed)")
        #expect(Self.contents(directory) == ["big.bin"])
    }

    @Test("--continue with a FILE.part that is already whole (416) renames it into place")
    func completePartFileIsRenamed() async throws {
        let server = try await TestServer.start()
        defer { Task { try await server.shutdown() } }
        let directory = try CourierProcess.temporaryDirectory()
        let file = directory.appendingPathComponent("whole.bin")
        try Self.alphabet(5_000).write(to: directory.appendingPathComponent("whole.bin.part"))
        let run = try await CourierProcess.run(["-d", "-c", "-o", file.path, server.baseURL.absoluteString + "/range/5000"])
        #expect(run.status == 0, "\(run)")
        #expect(try Data(contentsOf: file) == Self.alphabet(5_000))
        #expect(Self.contents(directory) == ["whole.bin"])
    }

    @Test("a download killed mid-transfer leaves FILE.part, which --continue completes")
    func killedDownloadResumes() async throws {
        let server = try await TestServer.start()
        defer { Task { try await server.shutdown() } }
        let directory = try CourierProcess.temporaryDirectory()
        let file = directory.appendingPathComponent("slow.bin")
        let part = directory.appendingPathComponent("slow.bin.part")
        let size = 100_000
        let url = server.baseURL.absoluteString + "/range/\(size)"
        let process = Process()
        process.executableURL = CourierBinary.url
        process.arguments = ["-d", "-o", file.path, url + "?duration=60&chunk_size=1000"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try ProcessLauncher.run(process)
        defer { if process.isRunning { process.terminate() } }
        let partSize: () -> Int = {
            ((try? FileManager.default.attributesOfItem(atPath: part.path)[.size]) as? NSNumber)?.intValue ?? 0
        }
        let deadline = Date().addingTimeInterval(60)
        while partSize() < 3_000 && Date() < deadline { try await Task.sleep(for: .milliseconds(20)) }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        let kept = try Data(contentsOf: part)
        #expect(kept.count >= 3_000 && kept.count < size)
        #expect(kept == Self.alphabet(kept.count))

        let resumed = try await CourierProcess.run(["-d", "-c", "-o", file.path, url])
        #expect(resumed.status == 0, "\(resumed)")
        #expect(try Data(contentsOf: file) == Self.alphabet(size))
        #expect(resumed.errors.contains("Content-Range: bytes \(kept.count)-99999/100000"), "\(resumed)")
        #expect(Self.contents(directory) == ["slow.bin"])
    }

    @Test("a failed download without -o leaves no file behind, in the current or the temporary directory")
    func failedDownloadLeavesNoTemporaryFile() async throws {
        let server = try await TestServer.start()
        defer { Task { try await server.shutdown() } }
        let work = try CourierProcess.temporaryDirectory()
        let temporary = try CourierProcess.temporaryDirectory()
        let run = try await Self.runWithTemporaryDirectory(
            ["-d", server.baseURL.absoluteString + "/range/80000?reset_after=30000"], in: work, temporary: temporary)
        #expect(run.status != 0, "\(run)")
        #expect(Self.contents(work) == [], "\(run)")
        #expect(Self.contents(temporary) == [], "\(run)")
    }

    /// Runs `courier arguments` in `work` with `TMPDIR` set to `temporary`.
    static func runWithTemporaryDirectory(_ arguments: [String], in work: URL, temporary: URL) async throws -> CourierRun {
        try await CourierProcess.run(arguments, in: work, environment: ["TMPDIR": temporary.path])
    }

    /// A one-shot Python server on loopback answering every request with a gzip bomb (4 MiB of
    /// zeros in 4 KiB, past the engine's 100x ratio), served in 1 KiB writes; its port.
    static func startGzipBombServer() throws -> (process: Process, port: Int) {
        let script = """
            import gzip, socket, sys, time
            body = gzip.compress(b"\\0" * (4 << 20))
            server = socket.socket()
            server.bind(("127.0.0.1", 0))
            server.listen(8)
            print(server.getsockname()[1], flush=True)
            while True:
                connection, _ = server.accept()
                connection.recv(65536)
                connection.sendall(b"HTTP/1.1 200 OK\\r\\nContent-Encoding: gzip\\r\\nContent-Length: %d\\r\\n\\r\\n" % len(body))
                for start in range(0, len(body), 1024):
                    try:
                        connection.sendall(body[start:start + 1024])
                    except OSError:
                        break
                    time.sleep(0.001)
                connection.close()
            """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", script]
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try ProcessLauncher.run(process)
        var line = Data()
        while !line.contains(UInt8(ascii: "\n")) {
            let byte = out.fileHandleForReading.readData(ofLength: 1)
            if byte.isEmpty { break }
            line.append(byte)
        }
        let text = String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard let port = Int(text) else {
            process.terminate()
            throw CLITestFailure("the Python server did not print its port: \(text)")
        }
        return (process, port)
    }

    @Test("a gzip bomb leaves no file: not FILE, not FILE.part, nothing in the temporary directory")
    func gzipBombLeavesNoFile() async throws {
        let (server, port) = try Self.startGzipBombServer()
        defer { server.terminate() }
        let work = try CourierProcess.temporaryDirectory()
        let temporary = try CourierProcess.temporaryDirectory()
        for arguments in [["-d", "-o", work.appendingPathComponent("bomb.bin").path], ["-d"]] {
            let run = try await Self.runWithTemporaryDirectory(
                arguments + ["http://127.0.0.1:\(port)/bomb.bin"], in: work, temporary: temporary)
            #expect(run.status != 0, "\(arguments) \(run)")
            #expect(Self.contents(work) == [], "\(arguments) \(run)")
            #expect(Self.contents(temporary) == [], "\(arguments) \(run)")
        }
    }
}
