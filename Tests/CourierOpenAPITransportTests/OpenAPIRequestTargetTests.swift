import Courier
import CourierOpenAPITransport
import Foundation
import HTTPTypes
import Testing

/// The base URL and an operation's path put together, with plain values.
@Suite("OpenAPI request target")
struct OpenAPIRequestTargetTests {
    private func target(_ path: String, base: String, method: HTTPRequest.Method = .get) throws -> HTTPRequest {
        let request = HTTPRequest(method: method, scheme: nil, authority: nil, path: path, headerFields: [.accept: "application/json"])
        return try OpenAPIRequestTarget.request(request, baseURL: try #require(URL(string: base)))
    }

    @Test("scheme and authority come from the base URL; method and fields are kept")
    func origin() throws {
        let request = try target("/pets?limit=2", base: "https://api.example.com:8443", method: .post)
        #expect(request.scheme == "https")
        #expect(request.authority == "api.example.com:8443")
        #expect(request.path == "/pets?limit=2")
        #expect(request.method == .post)
        #expect(request.headerFields[.accept] == "application/json")
    }

    @Test("the base URL's path goes first, with one slash where they meet", arguments: [
        ("http://h", "/pets", "/pets"),
        ("http://h/", "/pets", "/pets"),
        ("http://h/v1", "/pets", "/v1/pets"),
        ("http://h/v1/", "/pets", "/v1/pets"),
        ("http://h/v1/", "pets", "/v1/pets"),
        ("http://h/v1", "?q=1", "/v1?q=1"),
        ("http://h", "?q=1", "/?q=1"),
        ("http://h/v1", "", "/v1"),
        ("http://h/a%20b/", "/c", "/a%20b/c"),
        ("http://h/v1?x=1#f", "/pets", "/v1/pets"),
    ])
    func joining(base: String, path: String, expected: String) throws {
        #expect(try target(path, base: base).path == expected)
    }

    @Test("IPv6 hosts and user info stay in the authority")
    func authority() throws {
        #expect(try target("/", base: "http://[::1]:8080").authority == "[::1]:8080")
        #expect(try target("/", base: "http://user:pw@h:81").authority == "user:pw@h:81")
    }

    @Test("a base URL without scheme or host is a requestSerializationFailed naming it")
    func invalidBase() throws {
        for base in ["/relative/path", "mailto:someone"] {
            #expect {
                _ = try target("/pets", base: base)
            } throws: { error in
                guard case CourierError.requestSerializationFailed(.invalidURL(let text)) = error else { return false }
                return text == base
            }
        }
    }
}
