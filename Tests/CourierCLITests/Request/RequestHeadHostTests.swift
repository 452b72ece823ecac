import CourierTestServer
import Foundation
import Testing

/// The request head courier prints (`-v`, `-p H`, `--offline`) names the Host the server gets.
@Suite("courier printed Host")
struct RequestHeadHostTests {
    @Test("an IPv6 literal is printed in brackets, as it is sent")
    func anIPv6HostIsBracketed() async throws {
        try await TestServer.withRunning(.init(host: "::1")) { server in
            let run = try await CourierProcess.run(["-p", "Hb", "http://[::1]:\(server.port)/headers"])
            #expect(run.status == 0, "\(run)")
            #expect(run.output.contains("\nHost: [::1]:\(server.port)\n"), "\(run)")
            #expect(run.output.contains("\"Host\" : \"[::1]:\(server.port)\""), "what the server got: \(run)")
        }
        let offline = try await CourierProcess.run(["--offline", "http://[::1]:8080/get"])
        #expect(offline.output.contains("\nHost: [::1]:8080\n"), "\(offline)")
    }

    /// The printed Host and target are the engine's own (RequestTarget), not rebuilt from
    /// Foundation's URL accessors: a default port is not sent, so not printed; a zone's `%25`
    /// and a percent-escaped host name stay as typed, as on the wire.
    @Test("the printed Host and request target are exactly what the engine sends", arguments: [
        ("http://h:80/get", "GET /get HTTP/1.1", "Host: h"),
        ("https://h:443/a%20b?q=%41", "GET /a%20b?q=%41 HTTP/1.1", "Host: h"),
        ("http://[fe80::1%25lo]:8080/", "GET / HTTP/1.1", "Host: [fe80::1%25lo]:8080"),
        ("http://ex%61mple.test/", "GET / HTTP/1.1", "Host: ex%61mple.test"),
    ])
    func printedAsSent(url: String, requestLine: String, host: String) async throws {
        let offline = try await CourierProcess.run(["--offline", url])
        #expect(offline.output.hasPrefix(requestLine + "\n"), "\(offline)")
        #expect(offline.output.contains("\n" + host + "\n"), "\(offline)")
    }
}
