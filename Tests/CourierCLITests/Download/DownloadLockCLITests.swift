import CourierTestServer
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Two `courier -d -o FILE` at once wrote the same `FILE.part`, each truncating what the other
/// had written, and each renamed it into place. The file a download writes is locked for the
/// run: the second is refused before anything is sent.
@Suite("courier download lock")
struct DownloadLockCLITests {
    @Test("a second download to the same -o FILE while the first runs is refused; the first completes intact")
    func aSecondDownloadToTheSameFileIsRefused() async throws {
        try await TestServer.withRunning { server in
            let directory = try CourierProcess.temporaryDirectory()
            let file = directory.appendingPathComponent("slow.bin")
            let part = directory.appendingPathComponent("slow.bin.part")
            let size = 100_000
            let url = server.baseURL.absoluteString + "/range/\(size)"
            // 20 s of transfer: the first is still writing while the second runs.
            let first = try CourierChild(["-d", "-o", file.path, url + "?duration=20&chunk_size=1000"])
            let partSize: () -> Int = {
                ((try? FileManager.default.attributesOfItem(atPath: part.path)[.size]) as? NSNumber)?.intValue ?? 0
            }
            // The first has written bytes (hang bound: 60 s).
            let clock = ContinuousClock()
            let end = clock.now + .seconds(60)
            while partSize() == 0 && clock.now < end { try await Task.sleep(for: .milliseconds(20)) }
            #expect(partSize() > 0)
            let second = try await CourierProcess.run(["-d", "-o", file.path, url])
            #expect(second.status == 2, "\(second)")
            #expect(second.errors.contains("another courier is writing \(part.path)"), "\(second)")
            let ended = await first.waitForExit(bound: 120)
            #expect(ended.status == 0, "\(first.errorOutput)")
            #expect(try Data(contentsOf: file) == DownloadCLITests.alphabet(size), "\(first.errorOutput)")
            #expect(DownloadCLITests.contents(directory) == ["slow.bin"])
        }
    }

    /// `FILE.part` is courier's own file, but a symbolic link, a folder or a FIFO may be found
    /// at its name: the download was sent, then refused when the file was to be written (a
    /// link's target left alone, but a request the user never gets the answer of, and for
    /// `--continue` a `Range` request made for a file that isn't there). Refused before
    /// anything is sent, naming what is in the way; the link's target is untouched.
    @Test("a FILE.part that is a symbolic link, a folder or a FIFO is refused before anything is sent", arguments: [false, true])
    func aPartThatIsNotARegularFileIsRefusedBeforeSending(continuing: Bool) async throws {
        try await TestServer.withRunning { server in
            let directory = try CourierProcess.temporaryDirectory()
            let file = directory.appendingPathComponent("out.bin")
            let part = directory.appendingPathComponent("out.bin.part")
            let victim = directory.appendingPathComponent("victim")
            try Data("victim".utf8).write(to: victim)
            let path = "/range/1000"
            let cases: [(String, () throws -> Void)] = [
                ("a symbolic link", { try FileManager.default.createSymbolicLink(at: part, withDestinationURL: victim) }),
                ("a directory", { try FileManager.default.createDirectory(at: part, withIntermediateDirectories: false) }),
                ("not a regular file", { #expect(mkfifo(part.path, 0o600) == 0) }),
            ]
            for (what, make) in cases {
                try make()
                let run = try await CourierProcess.run(
                    ["-d", "-o", file.path] + (continuing ? ["--continue"] : []) + [server.baseURL.absoluteString + path])
                #expect(run.status == 2, "\(what): \(run)")
                #expect(run.errors.contains("cannot write to \(part.path): it is \(what); nothing was changed"), "\(what): \(run)")
                #expect(server.requestsReceived(forPath: path) == 0, "\(what): sent before the refusal")
                #expect(!FileManager.default.fileExists(atPath: file.path), "\(what)")
                try FileManager.default.removeItem(at: part)
            }
            #expect(try String(contentsOf: victim, encoding: .utf8) == "victim")
        }
    }
}
