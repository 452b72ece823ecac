import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@Suite struct PropertyListRequestSerializerTests {
    @Test func xmlBodyRoundTrips() throws {
        let serializer = PropertyListRequestSerializer()
        let request = try serializer.request(method: "POST", urlString: "http://h/", parameters: ["a": 1, "b": ["x", 2.5, true]])
        #expect(request.value(forHTTPHeaderField: "Content-Type") == "application/x-plist")
        let body = try #require(request.httpBody)
        #expect(String(decoding: body, as: UTF8.self).hasPrefix("<?xml"))
        var format = PropertyListSerialization.PropertyListFormat.binary
        let object = try PropertyListSerialization.propertyList(from: body, options: [], format: &format)
        #expect(format == .xml)
        let dictionary = try #require(object as? [String: Any])
        #expect((dictionary["a"] as? NSNumber)?.intValue == 1)
        #expect((dictionary["b"] as? [Any])?.first as? String == "x")
    }

    @Test func binaryFormat() throws {
        let serializer = PropertyListRequestSerializer(format: .binary)
        let request = try serializer.request(method: "POST", urlString: "http://h/", parameters: ["a": "b"])
        let body = try #require(request.httpBody)
        #expect(body.starts(with: Data("bplist00".utf8)))
    }

    @Test func nilParametersAndURIMethods() throws {
        let serializer = PropertyListRequestSerializer()
        let none = try serializer.request(method: "POST", urlString: "http://h/", parameters: nil)
        #expect(none.httpBody == nil)
        #expect(none.value(forHTTPHeaderField: "Content-Type") == nil)
        let get = try serializer.request(method: "GET", urlString: "http://h/", parameters: ["a": 1])
        #expect(get.url?.absoluteString == "http://h/?a=1")
    }

    @Test func nullIsATypedError() {
        #expect {
            try PropertyListRequestSerializer().request(method: "POST", urlString: "http://h/", parameters: ["a": .null])
        } throws: { error in
            guard case .requestSerializationFailed(.invalidPropertyListValue) = error as? CourierError else { return false }
            return true
        }
    }
}
