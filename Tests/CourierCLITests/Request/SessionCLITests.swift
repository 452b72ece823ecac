import CourierTestServer
import Foundation
import Testing

@testable import courier

/// `--session NAME|PATH` and `--session-read-only`: cookies, credentials and headers kept
/// between runs in `$XDG_CONFIG_HOME/courier/sessions/HOST_PORT/NAME.json` (mode 0600).
@Suite("courier sessions")
struct SessionCLITests {
    static func environment(_ directory: URL) -> [String: String] {
        ["XDG_CONFIG_HOME": directory.path]
    }

    static func permissions(_ url: URL) throws -> Int {
        let attributes = try FileManager.default.attributesOfItem(atPath: url.path)
        return (attributes[.posixPermissions] as? NSNumber)?.intValue ?? -1
    }

    @Test func aNamedSessionKeepsCookiesCredentialsAndHeaders() async throws {
        try await TestServer.withRunning { server in
            let config = try CourierProcess.temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: config) }
            let env = Self.environment(config)
            let base = server.baseURL.absoluteString
            let first = try await CourierProcess.run(
                ["--session", "alice", "-a", "alice:s3cret", base + "/cookies/set?flavour=oat", "X-Team:blue"],
                environment: env)
            #expect(first.status == 0, "\(first)")
            let file = config.appendingPathComponent("courier/sessions/127.0.0.1_\(server.port)/alice.json")
            #expect(FileManager.default.fileExists(atPath: file.path), "\(first)")
            #expect(try Self.permissions(file) == 0o600)
            let stored = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: file)) as? [String: Any])
            let headers = try #require(stored["headers"] as? [[String: Any]])
            #expect(headers.contains { $0["name"] as? String == "X-Team" && $0["value"] as? String == "blue" }, "\(stored)")
            let cookies = try #require(stored["cookies"] as? [[String: Any]])
            #expect(cookies.contains { $0["name"] as? String == "flavour" && $0["value"] as? String == "oat" }, "\(stored)")
            let auth = try #require(stored["auth"] as? [String: Any])
            #expect(auth["type"] as? String == "basic" && auth["username"] as? String == "alice", "\(stored)")
            #expect(auth["password"] as? String == "s3cret", "a password given on the command line is kept")

            let second = try await CourierProcess.run(["--session", "alice", base + "/anything"], environment: env)
            #expect(second.status == 0, "\(second)")
            let echoed = try #require(try second.json()["headers"] as? [String: Any])
            #expect(echoed["Cookie"] as? String == "flavour=oat", "\(second)")
            #expect(echoed["X-Team"] as? String == "blue", "\(second)")
            #expect(echoed["Authorization"] as? String == "Basic " + Data("alice:s3cret".utf8).base64EncodedString(), "\(second)")
            // --offline shows what the session adds, and records a new header.
            let offline = try await CourierProcess.run(["--session", "alice", "--offline", "-p", "H", base + "/x", "X-Extra:1"], environment: env)
            #expect(offline.output.contains("\nCookie: flavour=oat\n") && offline.output.contains("\nX-Team: blue\n"), "\(offline)")
            #expect(offline.output.contains("\nAuthorization: Basic "), "\(offline)")
            #expect(try String(contentsOf: file, encoding: .utf8).contains("X-Extra"))
            // A header typed on the command line wins over the stored one, and is stored.
            let third = try await CourierProcess.run(["--session", "alice", base + "/anything", "X-Team:red"], environment: env)
            #expect((try third.json()["headers"] as? [String: Any])?["X-Team"] as? String == "red", "\(third)")
            let updated = try String(contentsOf: file, encoding: .utf8)
            #expect(updated.contains("red") && !updated.contains("blue"), "\(updated)")
        }
    }

    @Test func readOnlySessionIsUsedButNotUpdated() async throws {
        try await TestServer.withRunning { server in
            let config = try CourierProcess.temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: config) }
            let env = Self.environment(config)
            let base = server.baseURL.absoluteString
            _ = try await CourierProcess.run(["--session", "s", base + "/cookies/set?a=1"], environment: env)
            let file = config.appendingPathComponent("courier/sessions/127.0.0.1_\(server.port)/s.json")
            let before = try Data(contentsOf: file)
            let run = try await CourierProcess.run(
                ["--session-read-only", "s", base + "/cookies/set?b=2", "X-New:1"], environment: env)
            #expect(run.status == 0, "\(run)")
            #expect(try Data(contentsOf: file) == before)
            let check = try await CourierProcess.run(["--session-read-only", "s", base + "/cookies"], environment: env)
            #expect(try check.json()["cookies"] as? [String: String] == ["a": "1"], "\(check)")
            // A read-only session that does not exist yet is created (HTTPie), then left alone.
            let created = config.appendingPathComponent("courier/sessions/127.0.0.1_\(server.port)/new.json")
            let missing = try await CourierProcess.run(["--session-read-only", "new", base + "/get", "X-A:orig"], environment: env)
            #expect(missing.status == 0, "\(missing)")
            #expect(try String(contentsOf: created, encoding: .utf8).contains("orig"))
            _ = try await CourierProcess.run(["--session-read-only", "new", base + "/get", "X-A:changed"], environment: env)
            #expect(try !String(contentsOf: created, encoding: .utf8).contains("changed"))
        }
    }

    @Test func aSessionPathIsUsedAsGivenAndABadFileIsExit2() async throws {
        try await TestServer.withRunning { server in
            let directory = try CourierProcess.temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let file = directory.appendingPathComponent("mine.json")
            let run = try await CourierProcess.run(["--session", file.path, server.baseURL.absoluteString + "/get", "X-A:1"])
            #expect(run.status == 0, "\(run)")
            #expect(try Self.permissions(file) == 0o600)
            try Data("not json".utf8).write(to: file)
            let bad = try await CourierProcess.run(["--session", file.path, server.baseURL.absoluteString + "/get"])
            #expect(bad.status == 2 && bad.errors.contains(file.path), "\(bad)")
            let leftovers = try FileManager.default.contentsOfDirectory(atPath: directory.path)
            #expect(leftovers == ["mine.json"], "no temporary file left: \(leftovers)")
        }
    }

    @Test func aPasswordTypedAtThePromptIsNotStoredUnlessAsked() async throws {
        // A terminal for the prompt: util-linux script(1) runs courier on a pseudo-terminal
        // whose input is our pipe.
        let script = URL(fileURLWithPath: "/usr/bin/script")
        guard FileManager.default.isExecutableFile(atPath: script.path) else {
            print("skipped: /usr/bin/script (util-linux) is not installed")
            return
        }
        try await TestServer.withRunning { server in
            let config = try CourierProcess.temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: config) }
            let url = server.baseURL.absoluteString + "/basic-auth/bob/typed-pw"
            let file = config.appendingPathComponent("courier/sessions/127.0.0.1_\(server.port)/p.json")
            func run(_ options: String) async throws -> CourierRun {
                try await CourierProcess.run(
                    ["-qec", "\(CourierBinary.url.path) --session p \(options) --pretty none -b \(url)", "/dev/null"],
                    environment: Self.environment(config), stdin: .pipe(Data("typed-pw\n".utf8)), executable: script)
            }
            let typed = try await run("-a bob")
            #expect(typed.status == 0 && typed.output.contains("password for bob@"), "\(typed)")
            #expect(typed.output.contains("\"authenticated\" : true"), "\(typed)")
            let stored = try String(contentsOf: file, encoding: .utf8)
            #expect(stored.contains("\"bob\"") && !stored.contains("typed-pw"), "\(stored)")
            // The stored user without a password: asked again.
            let again = try await run("")
            #expect(again.output.contains("password for bob@") && again.output.contains("\"authenticated\" : true"), "\(again)")
            let kept = try await run("--session-store-password -a bob")
            #expect(kept.status == 0, "\(kept)")
            #expect(try String(contentsOf: file, encoding: .utf8).contains("typed-pw"))
        }
    }

    @Test func aPromptedPasswordIsDroppedByTheSessionRule() {
        var session = SessionFile()
        session.update(auth: .init(type: "basic", username: "u", password: "typed"), passwordWasPrompted: true, storePrompted: false)
        #expect(session.auth?.username == "u" && session.auth?.password == nil)
        session.update(auth: .init(type: "basic", username: "u", password: "typed"), passwordWasPrompted: true, storePrompted: true)
        #expect(session.auth?.password == "typed")
        session.update(auth: .init(type: "digest", username: "v", password: "given"), passwordWasPrompted: false, storePrompted: false)
        #expect(session.auth == .init(type: "digest", username: "v", password: "given"))
    }

    @Test func sessionDirectoryFollowsHTTPiesLayout() {
        #expect(SessionFile.directoryName(for: URL(string: "http://127.0.0.1:8080/x")!) == "127.0.0.1_8080")
        #expect(SessionFile.directoryName(for: URL(string: "https://example.org/")!) == "example.org")
        #expect(SessionFile.directoryName(for: URL(string: "http://[::1]:80/")!) == "__1_80")
    }
}

/// `$XDG_CONFIG_HOME/courier/config.json`: `{"default_options": [...]}` before the command line.
@Suite("courier config file")
struct ConfigFileCLITests {
    @Test func defaultOptionsApplyAndTheCommandLineComesAfter() async throws {
        try await TestServer.withRunning { server in
            let config = try CourierProcess.temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: config) }
            let folder = config.appendingPathComponent("courier")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try Data(#"{"default_options": ["--print=h", "--check-status"]}"#.utf8)
                .write(to: folder.appendingPathComponent("config.json"))
            let env = ["XDG_CONFIG_HOME": config.path]
            let url = server.baseURL.absoluteString
            let run = try await CourierProcess.run([url + "/get"], environment: env)
            #expect(run.status == 0 && run.output.hasPrefix("HTTP/1.1 200 OK\n") && !run.output.contains("origin"), "\(run)")
            let failing = try await CourierProcess.run([url + "/status/404"], environment: env)
            #expect(failing.status == 4, "\(failing)")
            let overridden = try await CourierProcess.run(["--print=b", url + "/get"], environment: env)
            #expect(overridden.output.hasPrefix("{"), "\(overridden)")
            // Other subcommands don't take request options.
            let help = try await CourierProcess.run(["serve", "--help"], environment: env)
            #expect(help.status == 0, "\(help)")

            try Data("{oops".utf8).write(to: folder.appendingPathComponent("config.json"))
            let bad = try await CourierProcess.run([url + "/get"], environment: env)
            #expect(bad.status == 2 && bad.errors.contains("config.json"), "\(bad)")
        }
    }
}
