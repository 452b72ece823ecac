import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

@testable import Courier

/// ImageCredentialScope, the pure rule behind the image cache key's credential suffix and the
/// downloader's merge key, with plain values.
@Suite struct ImageCredentialScopeTests {
    @Test func noCredentialsNoSuffix() {
        #expect(ImageCredentialScope.keySuffix(values: [nil, nil, nil]) == "")
        #expect(ImageCredentialScope.keySuffix(for: URLRequest(url: URL(string: "http://h/a.png")!)) == "")  // a literal
    }

    @Test func theSuffixIsTheDigestOfTheFramedValues() {
        // SHA-256 of "+10:Bearer abc" "-" "-" (present with its UTF-8 length, then two absent fields).
        #expect(
            ImageCredentialScope.keySuffix(values: ["Bearer abc", nil, nil])
                == " credentials-sha256=f6454c67bd089478ca741f41f392113f6dfb01918258e4d64f40ec5ecb738aeb")
    }

    /// The token fields came after the first three: a request without any keeps the key it
    /// had before them, and a token field alone (or beside the others) is a scope of its own.
    @Test func tokenFieldsKeepEarlierKeysAndScopeApart() throws {
        let pinned = " credentials-sha256=f6454c67bd089478ca741f41f392113f6dfb01918258e4d64f40ec5ecb738aeb"
        #expect(ImageCredentialScope.keySuffix(values: ["Bearer abc", nil, nil, nil, nil, nil]) == pinned)
        var request = URLRequest(url: try #require(URL(string: "http://h/a.png")))
        request.setValue("Bearer abc", forHTTPHeaderField: "Authorization")
        #expect(ImageCredentialScope.keySuffix(for: request) == pinned)
        request.setValue("k-alice", forHTTPHeaderField: "x-api-key")
        let withToken = ImageCredentialScope.keySuffix(for: request)
        #expect(withToken != pinned && withToken.hasPrefix(ImageCredentialScope.suffixPrefix))
        #expect(withToken == ImageCredentialScope.keySuffix(values: ["Bearer abc", nil, nil, "k-alice", nil, nil]))
        #expect(!withToken.contains("k-alice"))
        var tokenOnly = URLRequest(url: try #require(URL(string: "http://h/a.png")))
        tokenOnly.setValue("t", forHTTPHeaderField: "X-Amz-Security-Token")
        let tokenOnlySuffix = ImageCredentialScope.keySuffix(for: tokenOnly)
        #expect(tokenOnlySuffix == ImageCredentialScope.keySuffix(values: [nil, nil, nil, nil, nil, "t"]))
        #expect(tokenOnlySuffix != "")
    }

    @Test func differentListsGiveDifferentSuffixes() {
        let lists: [[String?]] = [
            ["a", nil, nil], [nil, "a", nil], [nil, nil, "a"], ["", nil, nil], ["x", "", nil], ["", "x", nil],
            ["1:a", nil, nil], ["+1:a", nil, nil], ["a", "a", nil], ["aa", nil, nil],
            [nil, nil, nil, "a", nil, nil], [nil, nil, nil, nil, "a", nil], [nil, nil, nil, nil, nil, "a"],
            ["a", nil, nil, "", nil, nil], ["a", nil, nil, nil, nil, ""], [nil, nil, "-", nil, nil, nil],
        ]
        let suffixes = lists.map(ImageCredentialScope.keySuffix(values:))
        #expect(Set(suffixes).count == lists.count)
        for suffix in suffixes {
            #expect(suffix.hasPrefix(ImageCredentialScope.suffixPrefix))
            #expect(suffix.count == ImageCredentialScope.suffixPrefix.count + 64)
        }
    }

    @Test func aRequestsFieldsAreReadCaseInsensitivelyInOrder() throws {
        var request = URLRequest(url: try #require(URL(string: "http://h/a.png")))
        request.setValue("s=1", forHTTPHeaderField: "cookie")
        request.setValue("Basic eA==", forHTTPHeaderField: "PROXY-AUTHORIZATION")
        request.setValue("image/*", forHTTPHeaderField: "Accept")
        #expect(ImageCredentialScope.keySuffix(for: request) == ImageCredentialScope.keySuffix(values: [nil, "s=1", "Basic eA=="]))
    }
}
