import Courier
import Testing

/// ``RedirectRule/crossOriginSensitiveHeaders`` is public: its value, order included, is what
/// callers and the docs (``RedirectRule``, ``RequestInterceptor``) have always read. Naming
/// the credential fields in one place (``CredentialHeaders``) must not reorder it.
@Suite("Redirect: the public list of dropped credential fields")
struct RedirectSensitiveHeadersOrderTests {
    @Test func theListKeepsItsPublishedOrder() {
        #expect(RedirectRule.crossOriginSensitiveHeaders == ["Authorization", "Proxy-Authorization", "Cookie"])
    }
}
