import CourierTestServer
import Foundation
import Testing

/// `courier --auth` against the test server: credentials go only to the origin they were
/// given for, and `--auth-type digest` never sends the password as Basic.
@Suite("courier --auth")
struct AuthCLITests {
    /// `server`'s `/redirect-to` pointing at `target`.
    private func redirect(from server: TestServer, to target: String) -> String {
        var components = URLComponents(string: server.baseURL.absoluteString + "/redirect-to")
        components?.queryItems = [URLQueryItem(name: "url", value: target)]
        return components?.url?.absoluteString ?? ""
    }

    @Test("--auth-type digest, redirected to another origin asking Basic: the password is not sent")
    func digestNotSentAcrossOriginsAsBasic() async throws {
        try await TestServer.withRunning { origin in
            try await TestServer.withRunning { other in
                let url = redirect(from: origin, to: other.baseURL.absoluteString + "/basic-auth/user/pw")
                let run = try await CourierProcess.run(["--follow", "--print", "hb", "--auth", "user:pw", "--auth-type", "digest", url])
                #expect(run.output.contains("401"), "\(run)")
                #expect(!run.output.contains("\"authenticated\""), "\(run)")
            }
        }
    }

    @Test("--auth-type digest against a server asking only Basic: no downgrade, the 401 is the answer")
    func digestNeverDowngradesToBasic() async throws {
        try await TestServer.withRunning { server in
            let run = try await CourierProcess.run([
                "--print", "hb", "--auth", "user:pw", "--auth-type", "digest", server.baseURL.absoluteString + "/basic-auth/user/pw",
            ])
            #expect(run.output.contains("401"), "\(run)")
            #expect(!run.output.contains("\"authenticated\""), "\(run)")
        }
    }

    @Test("--auth-type digest answers Digest on the origin it was given for")
    func digestAnswered() async throws {
        try await TestServer.withRunning { server in
            let run = try await CourierProcess.run([
                "--print", "b", "--auth", "user:pw", "--auth-type", "digest",
                server.baseURL.absoluteString + "/digest-auth/auth/user/pw/SHA-256?offer=basic,md5",
            ])
            #expect(run.status == 0, "\(run)")
            #expect(run.output.contains("\"authenticated\""), "\(run)")
        }
    }

    @Test("--auth (Basic) is not sent to another origin reached by redirect")
    func basicNotSentAcrossOrigins() async throws {
        try await TestServer.withRunning { origin in
            try await TestServer.withRunning { other in
                let url = redirect(from: origin, to: other.baseURL.absoluteString + "/basic-auth/user/pw")
                let run = try await CourierProcess.run(["--follow", "--print", "hb", "--auth", "user:pw", url])
                #expect(run.output.contains("401"), "\(run)")
                #expect(!run.output.contains("\"authenticated\""), "\(run)")
            }
        }
    }
}
