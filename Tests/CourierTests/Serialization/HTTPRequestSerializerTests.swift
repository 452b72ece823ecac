import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@Suite struct HTTPRequestSerializerTests {
    @Test func getAppendsQueryOnlyWhenNonEmpty() throws {
        let serializer = HTTPRequestSerializer()
        let request = try serializer.request(method: "GET", urlString: "http://h/p", parameters: ["b": 2, "a": 1])
        #expect(request.url?.absoluteString == "http://h/p?a=1&b=2")
        #expect(request.httpBody == nil)
        #expect(request.value(forHTTPHeaderField: "Content-Type") == nil)
        let empty = try serializer.request(method: "GET", urlString: "http://h/p", parameters: [:])
        #expect(empty.url?.absoluteString == "http://h/p")
        let none = try serializer.request(method: "HEAD", urlString: "http://h/p", parameters: nil)
        #expect(none.url?.absoluteString == "http://h/p")
    }

    @Test func existingQueryGetsAmpersand() throws {
        let request = try HTTPRequestSerializer().request(method: "delete", urlString: "http://h/p?x=1#frag", parameters: ["a": "b c"])
        #expect(request.url?.absoluteString == "http://h/p?x=1&a=b%20c#frag")
    }

    @Test func postGetsFormBodyWithoutCharset() throws {
        let request = try HTTPRequestSerializer().request(method: "POST", urlString: "http://h/p", parameters: ["key": "value", "key1": "value&"])
        #expect(request.url?.absoluteString == "http://h/p")
        #expect(request.httpBody == Data("key=value&key1=value%26".utf8))
        #expect(request.value(forHTTPHeaderField: "Content-Type") == "application/x-www-form-urlencoded")
    }

    @Test func postWithNilParametersGetsEmptyBody() throws {
        let request = try HTTPRequestSerializer().request(method: "POST", urlString: "http://h/p", parameters: nil)
        #expect(request.httpBody == Data())
        #expect(request.value(forHTTPHeaderField: "Content-Type") == "application/x-www-form-urlencoded")
    }

    @Test func requestHeadersWinOverDefaults() throws {
        let serializer = HTTPRequestSerializer()
        serializer.setValue("default", forHTTPHeaderField: "X-A")
        serializer.setValue("default", forHTTPHeaderField: "X-B")
        var request = URLRequest(url: URL(string: "http://h/")!)
        request.httpMethod = "PUT"
        request.setValue("mine", forHTTPHeaderField: "x-a")
        request.setValue("text/plain", forHTTPHeaderField: "Content-Type")
        let serialized = try serializer.serialize(request, parameters: ["a": 1])
        #expect(serialized.value(forHTTPHeaderField: "X-A") == "mine")
        #expect(serialized.value(forHTTPHeaderField: "X-B") == "default")
        #expect(serialized.value(forHTTPHeaderField: "Content-Type") == "text/plain")
        #expect(serialized.httpBody == Data("a=1".utf8))
    }

    @Test func headerConfiguration() {
        let serializer = HTTPRequestSerializer()
        #expect(serializer.value(forHTTPHeaderField: "accept-language") == DefaultHeaders.processAcceptLanguage)
        #expect(serializer.httpRequestHeaders == [
            "Accept-Language": DefaultHeaders.processAcceptLanguage, "User-Agent": DefaultHeaders.processUserAgent,
        ])
        serializer.setValue("1", forHTTPHeaderField: "X-Thing")
        serializer.setValue("2", forHTTPHeaderField: "x-thing")
        #expect(serializer.value(forHTTPHeaderField: "X-THING") == "2")
        serializer.setValue(nil, forHTTPHeaderField: "X-Thing")
        #expect(serializer.value(forHTTPHeaderField: "X-Thing") == nil)
        serializer.setAuthorizationHeader(username: "user", password: "passwd")
        #expect(serializer.value(forHTTPHeaderField: "Authorization") == "Basic dXNlcjpwYXNzd2Q=")
        serializer.clearAuthorizationHeader()
        #expect(serializer.value(forHTTPHeaderField: "Authorization") == nil)
    }

    @Test func userAgentIsASCIIAndShaped() {
        let agent = DefaultHeaders.processUserAgent
        #expect(agent.utf8.allSatisfy { $0 >= 0x20 && $0 < 0x7F })
        #expect(agent.contains("/"))
        #expect(agent.contains("(Linux; "))
        let transliterated = DefaultHeaders.userAgent(
            info: ["CFBundleExecutable": "Zürich東京", "CFBundleShortVersionString": "1.2"],
            processName: "x", operatingSystemVersion: "Debian 12")
        #expect(transliterated == "Zurich dong jing/1.2 (Linux; Debian 12)")
        let fallback = DefaultHeaders.userAgent(info: [:], processName: "tool", operatingSystemVersion: "OS")
        #expect(fallback == "tool/unknown (Linux; OS)")
    }

    @Test func acceptLanguageQValues() {
        #expect(DefaultHeaders.acceptLanguage(for: ["en"]) == "en;q=1")
        #expect(DefaultHeaders.acceptLanguage(for: ["fr-FR", "en"]) == "fr-FR;q=1, en;q=0.9")
        let many = ["a", "b", "c", "d", "e", "f", "g", "h"]
        #expect(DefaultHeaders.acceptLanguage(for: many) == "a;q=1, b;q=0.9, c;q=0.8, d;q=0.7, e;q=0.6, f;q=0.5")
    }

    @Test func preferredLanguagesFromEnvironment() {
        #expect(DefaultHeaders.preferredLanguages(environment: ["LANGUAGE": "de_DE:fr:en", "LANG": "it_IT.UTF-8"]) == ["de-DE", "fr", "en"])
        #expect(DefaultHeaders.preferredLanguages(environment: ["LANG": "pt_BR.UTF-8"]) == ["pt-BR"])
        #expect(DefaultHeaders.preferredLanguages(environment: ["LC_ALL": "sr_RS@latin", "LANG": "en_US"]) == ["sr-RS"])
        #expect(!DefaultHeaders.preferredLanguages(environment: ["LANG": "C.UTF-8"]).isEmpty)
    }

    @Test func requestPropertiesAppliedOnlyOnceSet() throws {
        let serializer = HTTPRequestSerializer()
        let plain = try serializer.request(method: "GET", urlString: "http://h/", parameters: nil)
        let reference = URLRequest(url: URL(string: "http://h/")!)
        #expect(plain.timeoutInterval == reference.timeoutInterval)
        #expect(plain.cachePolicy == reference.cachePolicy)
        serializer.timeoutInterval = 7
        serializer.cachePolicy = .reloadIgnoringLocalCacheData
        serializer.httpShouldHandleCookies = false
        serializer.allowsCellularAccess = false
        serializer.networkServiceType = .background
        serializer.httpShouldUsePipelining = true
        let configured = try serializer.request(method: "GET", urlString: "http://h/", parameters: nil)
        #expect(configured.timeoutInterval == 7)
        #expect(configured.cachePolicy == .reloadIgnoringLocalCacheData)
        #expect(configured.httpShouldHandleCookies == false)
        #expect(configured.allowsCellularAccess == false)
        #expect(configured.networkServiceType == .background)
        #expect(serializer.httpShouldUsePipelining)
    }

    @Test func uriMethodsAreConfigurableAndUppercased() throws {
        let serializer = HTTPRequestSerializer()
        #expect(serializer.httpMethodsEncodingParametersInURI == ["GET", "HEAD", "DELETE"])
        serializer.httpMethodsEncodingParametersInURI = ["get"]
        let delete = try serializer.request(method: "DELETE", urlString: "http://h/", parameters: ["a": 1])
        #expect(delete.httpBody == Data("a=1".utf8))
        let get = try serializer.request(method: "get", urlString: "http://h/", parameters: ["a": 1])
        #expect(get.url?.absoluteString == "http://h/?a=1")
    }

    struct Refused: Error {}

    enum MyError: Error, Equatable { case boom }

    @Test func aQueryStringSerializationErrorIsRethrownUnchanged() throws {
        let serializer = HTTPRequestSerializer()
        serializer.queryStringSerialization = { _, _ in throw MyError.boom }
        do {
            _ = try serializer.request(method: "GET", urlString: "http://h/", parameters: ["a": 1])
            Issue.record("no error thrown")
        } catch {
            #expect(error as? MyError == .boom, "\(error)")
        }
        // Through the session manager's request building too.
        let manager = HTTPSessionManager(baseURL: URL(string: "http://h/"))
        let custom = HTTPRequestSerializer()
        custom.queryStringSerialization = { _, _ in throw MyError.boom }
        manager.requestSerializer = custom
        do {
            _ = try manager.makeRequest(method: "GET", urlString: "x", parameters: ["a": 1], headers: nil)
            Issue.record("no error thrown")
        } catch {
            #expect(error as? MyError == .boom, "\(error)")
        }
    }

    @Test func customQueryStringSerialization() throws {
        let serializer = HTTPRequestSerializer()
        serializer.queryStringSerialization = { _, parameters in "custom=\(parameters.count)" }
        let request = try serializer.request(method: "GET", urlString: "http://h/", parameters: ["a": 1, "b": 2])
        #expect(request.url?.absoluteString == "http://h/?custom=2")
        serializer.queryStringSerialization = { _, _ in throw Refused() }
        // The closure's own error comes back unchanged, as AFNetworking returns it.
        #expect(throws: Refused.self) {
            try serializer.request(method: "GET", urlString: "http://h/", parameters: ["a": 1])
        }
        serializer.queryStringSerialization = nil
        #expect(try serializer.request(method: "GET", urlString: "http://h/", parameters: ["a": 1]).url?.query == "a=1")
    }

    @Test func stringEncodingIsUsedForBodies() throws {
        let serializer = HTTPRequestSerializer()
        serializer.stringEncoding = .ascii
        let request = try serializer.request(method: "POST", urlString: "http://h/", parameters: ["a": "ü"])
        #expect(request.httpBody == Data("a=%C3%BC".utf8))
    }

    @Test func invalidURLIsATypedError() {
        #expect {
            try HTTPRequestSerializer().request(method: "GET", urlString: "", parameters: nil)
        } throws: { error in
            guard case .requestSerializationFailed(.invalidURL("")) = error as? CourierError else { return false }
            return true
        }
    }

    @Test func configurationIsThreadSafeWhileBuilding() async throws {
        let serializer = HTTPRequestSerializer()
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                for index in 0..<2_000 { serializer.setValue("\(index)", forHTTPHeaderField: "X-Counter") }
            }
            for _ in 0..<4 {
                group.addTask {
                    for _ in 0..<500 {
                        let request = try serializer.request(method: "POST", urlString: "http://h/", parameters: ["a": 1])
                        #expect(request.httpBody == Data("a=1".utf8))
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(serializer.value(forHTTPHeaderField: "X-Counter") == "1999")
    }
}
