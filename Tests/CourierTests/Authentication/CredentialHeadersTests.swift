@testable import Courier
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// ``CredentialHeaders``: the one place naming the header fields that carry credentials, and
/// what each rule (redirect, image key, cache key, log redaction) takes from it.
@Suite("Credential headers")
struct CredentialHeadersTests {
    @Test func theSetsAreWhatTheirRulesUse() {
        #expect(CredentialHeaders.requestFields == ["Authorization", "Cookie", "Proxy-Authorization"])
        #expect(Set(RedirectRule.crossOriginSensitiveHeaders) == Set(CredentialHeaders.requestFields))
        #expect(CredentialHeaders.tokenFields == ["X-Api-Key", "X-Auth-Token", "X-Amz-Security-Token"])
        #expect(ImageCredentialScope.fieldNames == CredentialHeaders.requestFields + CredentialHeaders.tokenFields)
        #expect(CredentialHeaders.userFields == ["authorization", "cookie"])
        #expect(CacheVary.impliedFieldNames(responseHeaders: [:]) == CredentialHeaders.userFields)
        #expect(ObservabilityRedaction.defaultSensitiveHeaders == CredentialHeaders.redactedFields)
        #expect(
            CredentialHeaders.redactedFields == [
                "authorization", "proxy-authorization", "cookie", "set-cookie", "x-api-key", "x-auth-token", "x-amz-security-token",
            ])
    }

    /// The sets nest: what a cache key or a log hides covers what a redirect strips, a user's
    /// fields are among the credentials; all names are as the rules compare them.
    @Test func theSetsNest() {
        let request = Set(CredentialHeaders.requestFields.map { $0.lowercased() })
        #expect(request.isSubset(of: CredentialHeaders.redactedFields))
        #expect(Set(CredentialHeaders.userFields).isSubset(of: request))
        #expect(Set(CredentialHeaders.tokenFields.map { $0.lowercased() }).isSubset(of: CredentialHeaders.redactedFields))
        #expect(CredentialHeaders.redactedFields.allSatisfy { $0 == $0.lowercased() })
        #expect(CredentialHeaders.userFields.allSatisfy { $0 == $0.lowercased() })
        #expect(CredentialHeaders.requestFields.count == request.count)
    }

    /// Every credential field a request carries is dropped on a redirect to another origin,
    /// whatever the case its name was set in, and logged as `REDACTED`.
    @Test func eachRequestFieldIsStrippedAndRedacted() throws {
        for name in CredentialHeaders.requestFields {
            var request = URLRequest(url: try #require(URL(string: "http://example.com/a")))
            request.setValue("secret", forHTTPHeaderField: name.uppercased())
            let next = try #require(RedirectRule.redirectedRequest(from: request, statusCode: 302, location: "http://other.example/b"))
            #expect(next.value(forHTTPHeaderField: name) == nil, "\(name)")
            let same = try #require(RedirectRule.redirectedRequest(from: request, statusCode: 302, location: "/b"))
            #expect(same.value(forHTTPHeaderField: name) == "secret", "\(name)")
            #expect(ObservabilityRedaction.default.redactedHeaderValue(name: name, value: "secret") == ObservabilityRedaction.placeholder)
        }
    }
}
