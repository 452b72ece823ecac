import CourierTestServer
import Foundation
import Testing

@testable import courier

/// `name==value` items and the URL typed: they go into the query, before any fragment.
@Suite("courier query items")
struct QueryItemURLTests {
    static func url(_ url: String, _ items: [String]) throws -> String {
        try RequestBuilder(arguments: RequestArguments.parse([url] + items)).urlWithQuery().absoluteString
    }

    @Test("query items go before the URL's fragment, after its query; a bare '?' or '&' gets no extra separator")
    func queryItemsGoBeforeTheFragment() throws {
        #expect(try Self.url("http://h/get#frag", ["a==1"]) == "http://h/get?a=1#frag")
        #expect(try Self.url("http://h/get?x=1#frag", ["a==1", "b==2"]) == "http://h/get?x=1&a=1&b=2#frag")
        #expect(try Self.url("http://h/get#a?b", ["a==1"]) == "http://h/get?a=1#a?b")
        #expect(try Self.url("http://h/get?", ["a==1"]) == "http://h/get?a=1")
        #expect(try Self.url("http://h/get?x=1&", ["a==1"]) == "http://h/get?x=1&a=1")
        #expect(try Self.url("http://h/get", ["a==1"]) == "http://h/get?a=1")
        #expect(try Self.url("http://h/get#frag", []) == "http://h/get#frag")
    }

    @Test("a query item typed with a URL that has a fragment reaches the server")
    func aQueryItemWithAFragmentReachesTheServer() async throws {
        try await TestServer.withRunning { server in
            let run = try await CourierProcess.run([server.baseURL.absoluteString + "/get#section", "a==1"])
            #expect(run.status == 0, "\(run)")
            #expect(try run.json()["args"] as? [String: String] == ["a": "1"], "\(run)")
        }
    }
}
