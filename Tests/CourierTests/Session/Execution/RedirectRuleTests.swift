import Courier
import Foundation
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// ``RedirectRule`` with plain values: the request a redirect sends, without a server.
@Suite("Redirect rule")
struct RedirectRuleTests {
    static func post(_ url: String = "http://example.com/form") -> URLRequest {
        var request = URLRequest(url: URL(string: url)!)
        request.httpMethod = "POST"
        request.httpBody = Data("a=1".utf8)
        request.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
        request.setValue("3", forHTTPHeaderField: "Content-Length")
        request.setValue("Basic dTpw", forHTTPHeaderField: "Authorization")
        request.setValue("id=1", forHTTPHeaderField: "Cookie")
        request.setValue("Basic cHJveHk=", forHTTPHeaderField: "Proxy-Authorization")
        request.setValue("kept", forHTTPHeaderField: "X-Custom")
        return request
    }

    @Test(arguments: [301, 302, 303])
    func aPostRedirectedBy301To303BecomesAGetWithoutItsBody(status: Int) throws {
        let next = try #require(RedirectRule.redirectedRequest(from: Self.post(), statusCode: status, location: "/done"))
        #expect(next.httpMethod == "GET")
        #expect(next.httpBody == nil)
        #expect(next.value(forHTTPHeaderField: "Content-Type") == nil)
        #expect(next.value(forHTTPHeaderField: "Content-Length") == nil)
        #expect(next.url?.absoluteString == "http://example.com/done")
        #expect(next.value(forHTTPHeaderField: "X-Custom") == "kept")
        #expect(next.value(forHTTPHeaderField: "Authorization") == "Basic dTpw")  // same origin
    }

    @Test(arguments: [307, 308])
    func a307Or308KeepsTheMethodAndTheBody(status: Int) throws {
        let next = try #require(RedirectRule.redirectedRequest(from: Self.post(), statusCode: status, location: "other"))
        #expect(next.httpMethod == "POST")
        #expect(next.httpBody == Data("a=1".utf8))
        #expect(next.value(forHTTPHeaderField: "Content-Length") == "3")
        #expect(next.url?.absoluteString == "http://example.com/other")  // relative to the request's URL
    }

    @Test func aHeadStaysAHead() throws {
        var head = URLRequest(url: URL(string: "http://example.com/a")!)
        head.httpMethod = "HEAD"
        let next = try #require(RedirectRule.redirectedRequest(from: head, statusCode: 303, location: "/b"))
        #expect(next.httpMethod == "HEAD")
    }

    @Test func anotherOriginLosesTheCredentialsOnly() throws {
        for location in ["http://other.example/x", "https://example.com/x", "http://example.com:8080/x"] {
            let next = try #require(RedirectRule.redirectedRequest(from: Self.post(), statusCode: 307, location: location))
            for header in RedirectRule.crossOriginSensitiveHeaders {
                #expect(next.value(forHTTPHeaderField: header) == nil, "\(header) to \(location)")
            }
            #expect(next.value(forHTTPHeaderField: "X-Custom") == "kept")
        }
    }

    @Test func theDefaultPortIsTheSameOrigin() throws {
        #expect(RedirectRule.sameOrigin(URL(string: "http://Example.com/a")!, URL(string: "http://example.com:80/b")!))
        #expect(RedirectRule.sameOrigin(URL(string: "https://example.com")!, URL(string: "https://example.com:443/")!))
        #expect(!RedirectRule.sameOrigin(URL(string: "http://example.com")!, URL(string: "https://example.com")!))
        let next = try #require(RedirectRule.redirectedRequest(from: Self.post(), statusCode: 308, location: "http://example.com:80/x"))
        #expect(next.value(forHTTPHeaderField: "Authorization") == "Basic dTpw")
    }

    @Test func onlyHTTPLocationsAreFollowed() {
        for location in ["ftp://example.com/x", "file:///etc/passwd", "javascript:alert(1)", "data:text/plain,hi"] {
            #expect(RedirectRule.redirectedRequest(from: Self.post(), statusCode: 302, location: location) == nil, "\(location)")
        }
    }

    @Test func redirectStatusCodesAreTheFiveFollowed() {
        #expect(RedirectRule.redirectStatusCodes == [301, 302, 303, 307, 308])
    }
}
