import CourierTestServer
import Foundation
import Testing

/// curl's `--resolve HOST:PORT:ADDR[,ADDR]` and `--connect-to HOST1:PORT1:HOST2:PORT2`, against
/// a TLS test server whose certificate names `wrong.host.example` (which no resolver knows).
@Suite("courier --resolve and --connect-to")
struct ResolveCLITests {
    @Test("--resolve reaches the server by the given address, with TLS checked for the URL's name")
    func resolve() async throws {
        try await TestServer.withRunning(.init(tls: .wrongHost)) { server in
            let caFile = try TLSCLITests.rootCAFile()
            let url = "https://wrong.host.example:\(server.port)/get"
            let run = try await CourierProcess.run(
                ["--resolve", "wrong.host.example:\(server.port):127.0.0.1", "--verify", caFile.path, url])
            #expect(run.status == 0, "\(run)")
            #expect((try run.json()["headers"] as? [String: Any])?["Host"] as? String == "wrong.host.example:\(server.port)")
            // The same address by the name the certificate doesn't hold: refused (exit 8).
            let refused = try await CourierProcess.run(
                ["--resolve", "localhost.test:\(server.port):127.0.0.1", "--verify", caFile.path, "https://localhost.test:\(server.port)/get"])
            #expect(refused.status == 8, "\(refused)")
        }
    }

    @Test("the name alone is checked: a certificate naming the address connected to, not the host, is refused")
    func addressInTheCertificateIsNotEnough() async throws {
        try await TestServer.withRunning(.init(tls: .valid)) { server in
            let caFile = try TLSCLITests.rootCAFile()
            // The valid chain names localhost and 127.0.0.1, not other.test.
            let run = try await CourierProcess.run(
                ["--resolve", "other.test:\(server.port):127.0.0.1", "--verify", caFile.path, "https://other.test:\(server.port)/get"])
            #expect(run.status == 8, "\(run)")
            #expect(run.errors.contains("other.test"), "\(run)")
        }
    }

    @Test("--connect-to sends the connection to another host and port; the request keeps its own")
    func connectTo() async throws {
        try await TestServer.withRunning(.init(tls: .wrongHost)) { server in
            let caFile = try TLSCLITests.rootCAFile()
            let run = try await CourierProcess.run(
                ["--connect-to", "wrong.host.example:443:127.0.0.1:\(server.port)", "--verify", caFile.path, "https://wrong.host.example/get"])
            #expect(run.status == 0, "\(run)")
            #expect((try run.json()["headers"] as? [String: Any])?["Host"] as? String == "wrong.host.example")
        }
    }

    @Test("a malformed --resolve or --connect-to is a usage error naming the option and the problem")
    func malformed() async throws {
        let cases: [([String], String)] = [
            (["--resolve", "example.test:443"], "--resolve 'example.test:443': it has no ':' between port and addresses"),
            (["--resolve", "example.test:443:localhost"], "'localhost' is not an IPv4 or IPv6 address"),
            (["--resolve", "example.test:http:127.0.0.1"], "the port 'http' is not a number from 1 to 65535"),
            (["--connect-to", "a:1:b"], "--connect-to 'a:1:b': it has 3 fields separated by ':', not 4"),
        ]
        for (arguments, message) in cases {
            let run = try await CourierProcess.run(arguments + ["http://example.test/get"])
            #expect(run.status == 2, "\(arguments): \(run)")
            #expect(run.errors.contains(message), "\(arguments): \(run)")
        }
    }

    @Test("--curl carries the options over")
    func curl() async throws {
        let run = try await CourierProcess.run(
            ["--curl", "--unix-socket", "/tmp/x.sock", "--resolve", "a.test:80:127.0.0.1", "--connect-to", "a.test:80::8080", "http://a.test/get"])
        #expect(run.status == 0, "\(run)")
        #expect(run.output.contains("--unix-socket '/tmp/x.sock' --resolve 'a.test:80:127.0.0.1' --connect-to 'a.test:80::8080'"), "\(run)")
    }
}
