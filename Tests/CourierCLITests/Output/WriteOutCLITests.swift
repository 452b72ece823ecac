@testable import courier
import CourierTestServer
import Foundation
import Testing

/// `-w/--write-out`: curl's variables after the body, so scripts written for curl port over.
@Suite("courier --write-out")
struct WriteOutCLITests {
    @Test("a format reads text, escapes, %% and variables; an unknown variable or an open %{ is an error naming it")
    func formatParsing() throws {
        let format = try WriteOutFormat(#"%{http_code} 100%% \t%{time_total}\n"#)
        #expect(format.pieces == [.variable(.httpCode), .text(" 100% \t"), .variable(.timeTotal), .text("\n")])
        #expect(format.render([.httpCode: "200", .timeTotal: "0.5"]) == "200 100% \t0.5\n")
        #expect(throws: WriteOutFormat.Invalid.self) { try WriteOutFormat("%{http_cod}") }
        do {
            _ = try WriteOutFormat("%{nope}")
        } catch {
            #expect(error.description.contains("unknown variable 'nope'"))
        }
        #expect(throws: WriteOutFormat.Invalid.self) { try WriteOutFormat("%{http_code") }
        // A lone % or backslash stays as it is, as in curl.
        #expect(try WriteOutFormat(#"50% \q"#).render([:]) == #"50% \q"#)
    }

    @Test("-w prints the status, the times in order, the size, the address and the redirects after the body")
    func writesCurlsVariables() async throws {
        let server = try await TestServer.start()
        defer { Task { try await server.shutdown() } }
        let target = server.baseURL.absoluteString + "/bytes/1000"
        let url = server.baseURL.absoluteString + "/redirect-to?url=" + (target.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? target)
        let format = #"\n%{http_code} %{http_version} %{num_redirects} %{size_download} %{remote_ip}:%{remote_port} %{url_effective}\n%{time_namelookup} %{time_connect} %{time_starttransfer} %{time_total}\n"#
        let run = try await CourierProcess.run(["--follow", "-w", format, "--print", "b", url])
        #expect(run.status == 0, "\(run)")
        let lines = run.output.split(separator: "\n").suffix(2).map(String.init)
        let first = try #require(lines.first).split(separator: " ").map(String.init)
        #expect(first == ["200", "1.1", "1", "1000", "127.0.0.1:\(server.port)", target], "\(run)")
        let times = try #require(lines.last).split(separator: " ").compactMap { Double($0) }
        #expect(times.count == 4)
        #expect(times == times.sorted(), "each phase ends after the one before: \(times)")
        #expect((times.last ?? 0) > 0)
    }

    @Test("an unknown variable is a usage error (exit 2) and nothing is sent")
    func unknownVariableIsAUsageError() async throws {
        let run = try await CourierProcess.run(["-w", "%{speed_upload}", "http://127.0.0.1:9/get"])
        #expect(run.status == 2, "\(run)")
        #expect(run.errors.contains("unknown variable 'speed_upload'"), "\(run)")
    }
}
