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
}
