import Foundation
import Testing

@testable import courier

/// A session file's counts: restoring each cookie costs a pass over the jar, and each header
/// one over the request's headers, so a 10 MB file of 100,000 cookies took courier nearly four
/// minutes before anything was sent. A session courier writes never holds more cookies than the
/// jar keeps (3,000), nor more headers than anyone types.
@Suite("courier session file limits")
struct SessionFileLimitTests {
    static func write(cookies: Int, headers: Int, to file: URL) throws {
        let cookie = { (i: Int) in
            #"{"name": "c\#(i)", "value": "v", "domain": "h\#(i).example", "hostOnly": true, "path": "/", "secure": false, "httpOnly": false}"#
        }
        let header = { (i: Int) in #"{"name": "X-H\#(i)", "value": "v"}"# }
        let text = #"{"__meta__": {"about": "a", "help": "h"}, "headers": [\#((0..<headers).map(header).joined(separator: ","))], "cookies": [\#((0..<cookies).map(cookie).joined(separator: ","))]}"#
        try Data(text.utf8).write(to: file)
    }

    @Test func aSessionWithMoreCookiesOrHeadersThanCourierKeepsIsRefused() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("session-limits-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("s.json")

        try Self.write(cookies: 3_001, headers: 0, to: file)
        let cookies = #expect(throws: RequestBuildError.self) { try SessionFile.load(from: file) }
        #expect(cookies?.description.contains("3001 cookies") == true, "\(String(describing: cookies))")
        #expect(cookies?.description.contains(file.path) == true, "\(String(describing: cookies))")

        try Self.write(cookies: 0, headers: 1_001, to: file)
        let headers = #expect(throws: RequestBuildError.self) { try SessionFile.load(from: file) }
        #expect(headers?.description.contains("1001 headers") == true, "\(String(describing: headers))")

        try Self.write(cookies: 3_000, headers: 1_000, to: file)
        let session = try SessionFile.load(from: file)
        #expect(session.cookies.count == 3_000 && session.headers.count == 1_000)
    }
}
