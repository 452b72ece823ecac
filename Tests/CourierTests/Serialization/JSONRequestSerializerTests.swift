import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@Suite struct JSONRequestSerializerTests {
    @Test func postGetsJSONBodyAndContentType() throws {
        let serializer = JSONRequestSerializer()
        let request = try serializer.request(
            method: "POST", urlString: "http://h/p",
            parameters: ["b": [1, 2.5, true, .null], "a": "x/y", "c": ["n": -9_007_199_254_740_993]])
        #expect(String(decoding: request.httpBody ?? Data(), as: UTF8.self)
            == #"{"a":"x\/y","b":[1,2.5,true,null],"c":{"n":-9007199254740993}}"#)
        #expect(request.value(forHTTPHeaderField: "Content-Type") == "application/json")
        #expect(request.value(forHTTPHeaderField: "User-Agent") == DefaultHeaders.processUserAgent)
        #expect(request.value(forHTTPHeaderField: "Accept-Language") == DefaultHeaders.processAcceptLanguage)
    }

    @Test func nilParametersGiveNoBodyAndNoContentType() throws {
        let request = try JSONRequestSerializer().request(method: "POST", urlString: "http://h/p", parameters: nil)
        #expect(request.httpBody == nil)
        #expect(request.value(forHTTPHeaderField: "Content-Type") == nil)
    }

    @Test func uriMethodsUseTheQuery() throws {
        let request = try JSONRequestSerializer().request(method: "GET", urlString: "http://h/p", parameters: ["a": 1])
        #expect(request.url?.absoluteString == "http://h/p?a=1")
        #expect(request.httpBody == nil)
    }

    @Test func topLevelArray() throws {
        let request = try JSONRequestSerializer().request(method: "PUT", urlString: "http://h/p", jsonObject: [1, "two", ["three": 3]])
        #expect(request.httpBody == Data(#"[1,"two",{"three":3}]"#.utf8))
    }

    @Test func writingOptions() throws {
        let serializer = JSONRequestSerializer(writingOptions: [.prettyPrinted, .withoutEscapingSlashes])
        let request = try serializer.request(method: "POST", urlString: "http://h/", parameters: ["a": ["/", 1], "b": [:]])
        #expect(String(decoding: request.httpBody ?? Data(), as: UTF8.self) == "{\n  \"a\" : [\n    \"/\",\n    1\n  ],\n  \"b\" : {}\n}")
    }

    @Test func invalidValuesAreTypedErrors() {
        for bad: ParameterValue in [.set(["a"]), .double(.nan), ["x": .double(.infinity)]] {
            #expect {
                try JSONRequestSerializer().request(method: "POST", urlString: "http://h/", parameters: ["k": bad])
            } throws: { error in
                guard case .requestSerializationFailed(.invalidJSONValue) = error as? CourierError else { return false }
                return true
            }
        }
    }

    @Test func existingContentTypeWins() throws {
        let serializer = JSONRequestSerializer()
        serializer.setValue("application/vnd.api+json", forHTTPHeaderField: "Content-Type")
        let request = try serializer.request(method: "POST", urlString: "http://h/", parameters: [:])
        #expect(request.value(forHTTPHeaderField: "Content-Type") == "application/vnd.api+json")
        #expect(request.httpBody == Data("{}".utf8))
    }

    @Test func stringEscapes() throws {
        let request = try JSONRequestSerializer().request(method: "POST", urlString: "http://h/", parameters: ["s": "\"\\\n\t\u{1}é😀"])
        #expect(String(decoding: request.httpBody ?? Data(), as: UTF8.self) == "{\"s\":\"\\\"\\\\\\n\\t\\u0001é😀\"}")
    }
}
