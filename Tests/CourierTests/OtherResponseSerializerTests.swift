import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@Suite struct XMLResponseSerializerTests {
    let xml = makeResponse(contentType: "application/xml")

    @Test func parserSerializerHandsBackAnUnstartedParser() throws {
        let serializer = XMLParserResponseSerializer()
        #expect(serializer.acceptableContentTypes == ["application/xml", "text/xml"])
        let response = try #require(try serializer.responseObject(for: xml, data: Data("<a><b/></a>".utf8)))
        #expect(response.makeParser().parse())
        #expect(try serializer.responseObject(for: xml, data: Data()) == nil)
        #expect(throws: CourierError.self) {
            try serializer.responseObject(for: makeResponse(contentType: "text/html"), data: Data("<a/>".utf8))
        }
    }

    @Test func documentSerializerBuildsADocument() throws {
        let serializer = XMLDocumentResponseSerializer()
        let document = try #require(
            try serializer.responseObject(for: makeResponse(contentType: "text/xml"), data: Data(#"<?xml version="1.0"?><slideshow title="x"><slide/></slideshow>"#.utf8)))
        #expect(document.rootElementName == "slideshow")
        #expect(document.withDocument { $0.rootElement()?.attribute(forName: "title")?.stringValue } == "x")
    }

    @Test func documentSerializerRejectsMalformedXML() {
        for text in ["<a><b></a>", "<a>", "not xml", "<a></a><b></b>"] {
            #expect("\(text)") {
                try XMLDocumentResponseSerializer().responseObject(for: xml, data: Data(text.utf8))
            } throws: { error in
                guard case .responseSerializationFailed = error as? CourierError else { return false }
                return true
            }
        }
    }
}

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

@Suite struct DecodableResponseSerializerTests {
    struct Item: Decodable, Sendable, Equatable { var id: Int; var name: String }

    @Test func decodes() throws {
        let item = try DecodableResponseSerializer(Item.self).responseObject(
            for: makeResponse(contentType: "application/json"), data: Data(#"{"id":1,"name":"a"}"#.utf8))
        #expect(item == Item(id: 1, name: "a"))
    }

    @Test func emptyResponses() throws {
        let serializer = DecodableResponseSerializer(Item.self)
        #expect(try serializer.responseObject(for: makeResponse(status: 204), data: Data()) == nil)
        #expect(try serializer.responseObject(for: makeResponse(status: 205), data: nil) == nil)
        #expect(throws: CourierError.self) { try serializer.responseObject(for: makeResponse(status: 200), data: Data()) }
        serializer.allowsEmptyResponses = true
        #expect(try serializer.responseObject(for: makeResponse(status: 200), data: Data()) == nil)
    }

    @Test func decodingErrorAndCustomDecoder() throws {
        #expect(throws: CourierError.self) {
            try DecodableResponseSerializer(Item.self).responseObject(for: makeResponse(contentType: "application/json"), data: Data("{}".utf8))
        }
        let snake = DecodableResponseSerializer(Item.self) {
            let decoder = JSONDecoder()
            decoder.keyDecodingStrategy = .convertFromSnakeCase
            return decoder
        }
        #expect(try snake.responseObject(for: makeResponse(contentType: "application/json"), data: Data(#"{"id":2,"name":"b"}"#.utf8)) == Item(id: 2, name: "b"))
    }
}

@Suite struct CompoundResponseSerializerTests {
    @Test func firstObjectWins() throws {
        let compound = CompoundResponseSerializer([JSONResponseSerializer(), ImageResponseSerializer(), StringResponseSerializer()])
        let json = try compound.responseObject(for: makeResponse(contentType: "application/json"), data: Data("[1]".utf8))
        #expect(json as? JSONValue == [1])
        let text = try compound.responseObject(for: makeResponse(contentType: "text/plain"), data: Data("hi".utf8))
        #expect(text as? String == "hi")
    }

    @Test func fallsBackToData() throws {
        let compound = CompoundResponseSerializer([JSONResponseSerializer()])
        let object = try compound.responseObject(for: makeResponse(contentType: "text/html"), data: Data("<p>".utf8))
        #expect(object as? Data == Data("<p>".utf8))
    }

    @Test func winnerErrorComesAlong() {
        let compound = CompoundResponseSerializer([JSONResponseSerializer()])
        let result = compound.serializeResponse(makeResponse(status: 404, contentType: "application/json"), data: Data(#"{"a":1}"#.utf8))
        #expect((result.object ?? nil) as? JSONValue == ["a": 1])
        #expect(result.error?.description == "Request failed: not found (404)")
    }
}
