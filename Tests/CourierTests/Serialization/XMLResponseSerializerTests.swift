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
