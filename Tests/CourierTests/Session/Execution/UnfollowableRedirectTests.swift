import Courier
import CourierTestServer
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// A redirect to a scheme the session never follows (`file:`, `ftp:`, `data:`) fails the task
/// with ``CourierError/unfollowableRedirect(url:location:)`` when redirects are followed, on
/// both execution paths; with redirects off, the 302 is the answer as before.
@Suite("Unfollowable redirects")
struct UnfollowableRedirectTests {
    static let locations = ["file:///etc/passwd", "ftp://127.0.0.1/x", "data:text/plain,hi"]

    @Test func theRuleRefusesOnlyOtherSchemes() {
        let http = URLRequest(url: URL(fileURLWithPath: "/a").withScheme("http"))
        for location in Self.locations {
            #expect(RedirectRule.isUnfollowable(from: http, statusCode: 302, location: location, maximumRedirects: 16))
            #expect(!RedirectRule.isUnfollowable(from: http, statusCode: 302, location: location, maximumRedirects: 0))
            #expect(!RedirectRule.isUnfollowable(from: http, statusCode: 200, location: location, maximumRedirects: 16))
        }
        // Hostile spellings: a scheme in capitals, a script URL, a scheme-relative location.
        #expect(RedirectRule.isUnfollowable(from: http, statusCode: 302, location: "FILE:///etc/passwd", maximumRedirects: 16))
        #expect(RedirectRule.isUnfollowable(from: http, statusCode: 307, location: "javascript:alert(1)", maximumRedirects: 16))
        #expect(!RedirectRule.isUnfollowable(from: http, statusCode: 302, location: "//other.example/x", maximumRedirects: 16))
        #expect(!RedirectRule.isUnfollowable(from: http, statusCode: 302, location: "/b", maximumRedirects: 16))
        #expect(!RedirectRule.isUnfollowable(from: http, statusCode: 302, location: "https://x/", maximumRedirects: 16))
    }

    @Test(arguments: locations)
    func aFollowingSessionFailsWithItsOwnError(location: String) async throws {
        try await TestServer.withRunning { server in
            var components = URLComponents(url: server.sessionURL("/redirect-to"), resolvingAgainstBaseURL: false)
            components?.queryItems = [URLQueryItem(name: "url", value: location)]
            let url = try #require(components?.url)
            // The direct path (an awaited call with nothing that needs a delegate) ...
            let direct = URLSessionManager()
            let directError = await #expect(throws: CourierError.self) {
                _ = try await direct.response(for: URLRequest(url: url), as: JSONValue.self)
            }
            guard case .unfollowableRedirect(let from, let to) = directError else {
                Issue.record("expected unfollowableRedirect, got \(String(describing: directError))")
                return
            }
            #expect(from == url && to == location)
            // ... and a TaskDelegate (an interceptor needs one).
            let delegated = URLSessionManager()
            delegated.interceptor = Interceptor([])
            let delegatedError = await #expect(throws: CourierError.self) {
                _ = try await delegated.data(for: URLRequest(url: url))
            }
            guard case .unfollowableRedirect = delegatedError else {
                Issue.record("expected unfollowableRedirect, got \(String(describing: delegatedError))")
                return
            }
            #expect(delegatedError?.description.contains("only http and https redirects are followed") == true)
            // Redirects off: the 302 is the answer.
            var configuration = SessionConfiguration()
            configuration.maximumRedirects = 0
            let manager = URLSessionManager(configuration: configuration)
            let serializer = HTTPResponseSerializer()
            serializer.acceptableStatusCodes = nil
            manager.responseSerializer = serializer
            let (_, response) = try await manager.data(for: URLRequest(url: url))
            #expect(response.statusCode == 302)
        }
    }
}

extension URL {
    /// `http://h/a` for the tests' rule checks, without a force unwrap.
    fileprivate func withScheme(_ scheme: String) -> URL {
        var components = URLComponents()
        components.scheme = scheme
        components.host = "h"
        components.path = path
        return components.url ?? self
    }
}
