import CourierTestServer
import Dispatch
import Foundation
import Testing

/// `courier ws`: standard input's lines out as messages, messages printed, the exit status
/// from how the socket ended.
@Suite("courier ws")
struct WebSocketCLITests {
    private func wsURL(_ server: TestServer, _ path: String) -> String {
        server.baseURL.absoluteString.replacingOccurrences(of: "http", with: "ws", options: .anchored) + path
    }

    @Test func linesGoOutAndEchoesArePrintedThenItClosesNormally() async throws {
        try await TestServer.withRunning { server in
            let run = try await CourierProcess.run(["ws", wsURL(server, "/ws/echo")], stdin: .pipe(Data("one\ntwo\nthree\n".utf8)))
            #expect(run.status == 0, "\(run)")
            #expect(run.output == "one\ntwo\nthree\n", "\(run)")
            #expect(server.webSocketClosesReceived == [1000])
        }
    }

    @Test func headerItemsGoWithTheHandshake() async throws {
        try await TestServer.withRunning { server in
            let run = try await CourierProcess.run(["ws", wsURL(server, "/ws/headers"), "X-Token:abc"])
            #expect(run.status == 0, "\(run)")
            let headers = try JSONSerialization.jsonObject(with: run.stdout) as? [String: String]
            #expect(headers?["X-Token"] == "abc", "\(run)")
        }
    }

    @Test func anApplicationCloseIsExit1NamingTheCodeAndReason() async throws {
        try await TestServer.withRunning { server in
            let run = try await CourierProcess.run(["ws", wsURL(server, "/ws/close?code=4001&reason=shutting%20down")])
            #expect(run.status == 1, "\(run)")
            #expect(run.errors.contains("4001") && run.errors.contains("shutting down"), "\(run)")
        }
    }

    @Test func aProtocolViolationIsExit1NamingTheCode() async throws {
        try await TestServer.withRunning { server in
            let run = try await CourierProcess.run(["ws", wsURL(server, "/ws/hostile/bad-utf8")])
            #expect(run.status == 1, "\(run)")
            #expect(run.errors.contains("1007"), "\(run)")
        }
    }

    @Test func aRefusedHandshakeIsExit1NamingTheStatus() async throws {
        try await TestServer.withRunning { server in
            let run = try await CourierProcess.run(["ws", wsURL(server, "/status/404")])
            #expect(run.status == 1, "\(run)")
            #expect(run.errors.contains("404"), "\(run)")
        }
    }

    @Test func statusesBeforeTheHandshakeAreTheRequestCommands() async throws {
        let refused = try await CourierProcess.run(["ws", "ws://127.0.0.1:1/"])
        #expect(refused.status == 7, "\(refused)")
        let noURL = try await CourierProcess.run(["ws"])
        #expect(noURL.status == 2, "\(noURL)")
        let badItem = try await CourierProcess.run(["ws", "ws://127.0.0.1:1/", "not-a-header"])
        #expect(badItem.status == 2, "\(badItem)")
        let badScheme = try await CourierProcess.run(["ws", "ftp://127.0.0.1/"])
        #expect(badScheme.status == 2, "\(badScheme)")
    }

    @Test(arguments: ["1e300", "inf"])
    func aHugePingIntervalIsClampedNotACrash(interval: String) async throws {
        try await TestServer.withRunning { server in
            let run = try await CourierProcess.run(
                ["ws", "--ping", interval, wsURL(server, "/ws/echo")], stdin: .pipe(Data("hi\n".utf8)))
            #expect(run.status == 0, "\(run)")
            #expect(run.output == "hi\n", "\(run)")
        }
    }

    @Test func verbosePrintsTheHandshake() async throws {
        try await TestServer.withRunning { server in
            let run = try await CourierProcess.run(["ws", "-v", wsURL(server, "/ws/echo")], stdin: .pipe(Data("hi\n".utf8)))
            #expect(run.status == 0, "\(run)")
            #expect(run.errors.contains("HTTP/1.1 101 Switching Protocols"), "\(run)")
            #expect(run.errors.lowercased().contains("sec-websocket-key:"), "the request's handshake fields: \(run)")
            #expect(run.errors.lowercased().contains("sec-websocket-accept:"), "the response's: \(run)")
        }
    }

    /// As a user types: a line, its echo, then the end of input. (Python's websockets drops an
    /// echo it has not sent once the client's close arrives, so the input stays open until the
    /// echo is back.)
    @Test func wssWorksAgainstThePythonPeerWithVerify() async throws {
        let peer = try PythonWebSocketPeer.startServer(tls: try TestCertificateAuthority.shared.serverChain(.valid))
        defer { peer.stop() }
        let ca = try TLSCLITests.rootCAFile().path
        let (status, output) = try await Self.interactive(
            ["ws", "--verify", ca, "wss://localhost:\(peer.port)/"], line: "hello python", awaiting: "hello python\n")
        #expect(status == 0, "\(output)")
        #expect(output == "hello python\n")
    }

    /// Runs `courier` with a pipe for standard input: writes `line`, waits (up to 30 s) for
    /// `awaiting` on standard output, then ends the input. The exit status and the output.
    static func interactive(_ arguments: [String], line: String, awaiting: String) async throws -> (Int32, String) {
        let process = Process()
        process.executableURL = CourierBinary.url
        process.arguments = arguments
        let input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try ProcessLauncher.run(process)
        return await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                input.fileHandleForWriting.write(Data((line + "\n").utf8))
                var received = Data()
                let deadline = Date().addingTimeInterval(30)
                while !String(decoding: received, as: UTF8.self).contains(awaiting), Date() < deadline {
                    let chunk = output.fileHandleForReading.availableData
                    if chunk.isEmpty { break }
                    received.append(chunk)
                }
                try? input.fileHandleForWriting.close()
                received.append(output.fileHandleForReading.readDataToEndOfFile())
                process.waitUntilExit()
                continuation.resume(returning: (process.terminationStatus, String(decoding: received, as: UTF8.self)))
            }
        }
    }

    @Test func courierHTTPSDefaultsToWSS() async throws {
        try await TestServer.withRunning(.init(tls: .valid)) { server in
            let ca = try TLSCLITests.rootCAFile().path
            let run = try await CourierProcess.run(
                ["ws", "--verify", ca, "localhost:\(server.port)/ws/echo"], stdin: .pipe(Data("secure\n".utf8)),
                executable: CourierBinary.httpsURL)
            #expect(run.status == 0, "\(run)")
            #expect(run.output == "secure\n", "\(run)")
        }
    }

    @Test func aWrongCertificateIsExit8() async throws {
        try await TestServer.withRunning(.init(tls: .valid)) { server in
            let run = try await CourierProcess.run(["ws", "wss://localhost:\(server.port)/ws/echo"])
            #expect(run.status == 8, "\(run)")
        }
    }
}
