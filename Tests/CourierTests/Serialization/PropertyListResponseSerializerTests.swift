import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@Suite struct PropertyListResponseSerializerTests {
    let plist = makeResponse(contentType: "application/x-plist")

    @Test func parsesXMLAndBinary() throws {
        let object: [String: Any] = ["i": 3, "r": 1.5, "b": true, "s": "x", "a": [1, "y"], "d": Data([9])]
        for format in [PropertyListSerialization.PropertyListFormat.xml, .binary] {
            let data = try PropertyListSerialization.data(fromPropertyList: object, format: format, options: 0)
            let value = try #require(try PropertyListResponseSerializer().responseObject(for: plist, data: data))
            #expect(value["i"] == .integer(3))
            #expect(value["r"] == .real(1.5))
            #expect(value["b"] == .bool(true))
            #expect(value["s"] == .string("x"))
            #expect(value["a"]?[1] == .string("y"))
            #expect(value["d"] == .data(Data([9])))
        }
    }

    @Test func emptyIsNilAndGarbageIsAnError() throws {
        #expect(try PropertyListResponseSerializer().responseObject(for: plist, data: Data()) == nil)
        #expect(throws: CourierError.self) {
            try PropertyListResponseSerializer().responseObject(for: plist, data: Data("<plist><dict><key>".utf8))
        }
    }
}
