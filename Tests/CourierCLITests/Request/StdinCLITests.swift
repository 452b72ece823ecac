import CourierTestServer
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Testing

/// Standard input as the body (HTTPie's redirected input): a pipe or a regular file is the body
/// and makes the method POST; a terminal or /dev/null is no body; `-I` ignores it; a piped body
/// together with data items is exit 2.
@Suite("courier reads the body from stdin")
struct StdinCLITests {
    @Test func pipedBodyIsSentWithPOSTAndJSONHeaders() async throws {
        try await TestServer.withRunning { server in
            let body = Data("{\"x\":1}\n".utf8)
            let run = try await CourierProcess.run([server.baseURL.absoluteString + "/anything"], stdin: .pipe(body))
            #expect(run.status == 0, "\(run)")
            let echo = try run.json()
            #expect(echo["method"] as? String == "POST", "\(run)")
            #expect(echo["data"] as? String == "{\"x\":1}\n", "\(run)")
            let headers = try #require(echo["headers"] as? [String: Any])
            #expect(headers["Content-Type"] as? String == "application/json", "\(run)")
            #expect(headers["Content-Length"] as? String == "8", "\(run)")
        }
    }

    @Test func aRegularFileOnStdinIsTheBodyAndAMethodGivenIsKept() async throws {
        try await TestServer.withRunning { server in
            let directory = try CourierProcess.temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let file = directory.appendingPathComponent("body.txt")
            try Data("from a file".utf8).write(to: file)
            let run = try await CourierProcess.run(
                ["--form", "PUT", server.baseURL.absoluteString + "/anything"], stdin: .file(file))
            #expect(run.status == 0, "\(run)")
            let echo = try run.json()
            #expect(echo["method"] as? String == "PUT", "\(run)")
            #expect(echo["form"] as? [String: Any] != nil)
            let headers = try #require(echo["headers"] as? [String: Any])
            #expect(headers["Content-Type"] as? String == "application/x-www-form-urlencoded", "\(run)")
            #expect(headers["Content-Length"] as? String == "11", "\(run)")
        }
    }

    @Test func devNullIsNoBodyAndTheMethodStaysGET() async throws {
        try await TestServer.withRunning { server in
            let run = try await CourierProcess.run([server.baseURL.absoluteString + "/anything"], stdin: .null)
            #expect(run.status == 0, "\(run)")
            let echo = try run.json()
            #expect(echo["method"] as? String == "GET", "\(run)")
            #expect(echo["data"] as? String == "", "\(run)")
        }
    }

    @Test func ignoreStdinLeavesAPipeUnread() async throws {
        try await TestServer.withRunning { server in
            for flag in ["-I", "--ignore-stdin"] {
                let run = try await CourierProcess.run(
                    [flag, server.baseURL.absoluteString + "/anything", "a=1"], stdin: .pipe(Data("ignored".utf8)))
                #expect(run.status == 0, "\(flag): \(run)")
                let echo = try run.json()
                #expect(echo["method"] as? String == "POST", "\(run)")
                #expect(echo["data"] as? String == "{\"a\":\"1\"}", "\(run)")
            }
        }
    }

    @Test func chunkedSendsAPipedBodyAsItIsRead() async throws {
        try await TestServer.withRunning { server in
            let body = Data(String(repeating: "0123456789", count: 30_000).utf8)
            let run = try await CourierProcess.run(
                ["--chunked", server.baseURL.absoluteString + "/anything"], stdin: .pipe(body))
            #expect(run.status == 0, "\(run)")
            let echo = try run.json()
            let headers = try #require(echo["headers"] as? [String: Any])
            #expect(headers["Transfer-Encoding"] as? String == "chunked", "\(headers)")
            #expect((echo["data"] as? String)?.utf8.count == body.count)
            #expect(echo["method"] as? String == "POST")
        }
    }

    @Test func aPipedBodyWithContentLengthOrChunkedStreamsInBoundedMemory() async throws {
        signal(SIGPIPE, SIG_IGN)
        try await TestServer.withRunning { server in
            let directory = try CourierProcess.temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let size = 256 << 20
            for extra in [["Content-Length:\(size)"], ["--chunked"]] {
                // A named pipe: courier's stdin is a pipe fed by a thread here.
                let fifo = directory.appendingPathComponent("stdin-\(UUID().uuidString)").path
                guard mkfifo(fifo, 0o600) == 0 else { throw CLITestFailure("mkfifo failed: \(errno)") }
                Thread.detachNewThread {
                    let descriptor = open(fifo, O_WRONLY)
                    guard descriptor >= 0 else { return }
                    defer { close(descriptor) }
                    let piece = [UInt8](repeating: 0x61, count: 1 << 20)
                    for _ in 0..<(size >> 20) where piece.withUnsafeBytes({ write(descriptor, $0.baseAddress, $0.count) }) == piece.count {}
                }
                let measured = try await MeasuredCourierRun.run(
                    [server.baseURL.absoluteString + "/upload"] + extra, stdinPath: fifo)
                #expect(measured.run.status == 0, "\(extra): \(measured)")
                #expect((try? measured.run.json()["bytes"] as? Int) == size, "\(extra): \(measured)")
                #expect(measured.peakResidentBytes < 128 << 20, "\(extra): peak RSS \(measured.peakResidentBytes >> 20) MiB")
            }
        }
    }

    @Test func aPipedBodyWithDataItemsIsExit2AndSendsNothing() async throws {
        try await TestServer.withRunning { server in
            let url = server.baseURL.absoluteString + "/anything"
            for items in [["a=1"], ["n:=2"], ["f@/etc/hostname"]] {
                let run = try await CourierProcess.run([url] + items, stdin: .pipe(Data("body".utf8)))
                #expect(run.status == 2, "\(items): \(run)")
                #expect(run.errors.contains("stdin") && run.errors.contains("--ignore-stdin"), "\(run)")
            }
            // Headers and query items are not data: the piped body is still used.
            let run = try await CourierProcess.run([url, "X-A:1", "q==2"], stdin: .pipe(Data("body".utf8)))
            #expect(run.status == 0, "\(run)")
            #expect(try run.json()["data"] as? String == "body", "\(run)")
            #expect(server.requestsReceived(forPath: "/anything") == 1)
        }
    }
}
