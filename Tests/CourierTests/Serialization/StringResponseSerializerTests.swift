import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@Suite struct StringResponseSerializerTests {
    @Test func honoursCharset() throws {
        let serializer = StringResponseSerializer()
        let latin1 = Data([0x63, 0x61, 0x66, 0xE9])
        #expect(try serializer.responseObject(for: makeResponse(contentType: "text/plain; charset=ISO-8859-1"), data: latin1) == "café")
        #expect(try serializer.responseObject(for: makeResponse(contentType: "text/plain; charset=\"utf-8\""), data: Data("café".utf8)) == "café")
        #expect(try serializer.responseObject(for: makeResponse(contentType: "text/plain"), data: Data("ü".utf8)) == "ü")
        let utf16 = try #require("hé".data(using: .utf16LittleEndian))
        #expect(try serializer.responseObject(for: makeResponse(contentType: "text/plain; charset=utf-16le"), data: utf16) == "hé")
        #expect(try serializer.responseObject(for: makeResponse(contentType: "text/plain"), data: nil) == "")
    }

    @Test func invalidBytesAreAnError() {
        #expect(throws: CourierError.self) {
            try StringResponseSerializer().responseObject(for: makeResponse(contentType: "text/plain; charset=utf-8"), data: Data([0xFF, 0xFE, 0xFD]))
        }
    }
}
