import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@Suite struct HTTPResponseSerializerTests {
    @Test func acceptsTwoHundredsAndReturnsData() throws {
        let serializer = HTTPResponseSerializer()
        let data = Data("abc".utf8)
        #expect(try serializer.responseObject(for: makeResponse(status: 204), data: data) == data)
        #expect(serializer.acceptableStatusCodes == IndexSet(integersIn: 200..<300))
        #expect(serializer.acceptableContentTypes == nil)
    }

    @Test func statusErrorMessageAndPayload() {
        let serializer = HTTPResponseSerializer()
        let data = Data("missing".utf8)
        let result = serializer.serializeResponse(makeResponse(status: 404, contentType: "text/plain"), data: data)
        #expect(result.object == .some(data))
        let error = result.error
        #expect(error != nil)
        #expect(error?.description == "Request failed: not found (404)")
        #expect(error?.localizedDescription == "Request failed: not found (404)")
        #expect(error?.response?.statusCode == 404)
        #expect(error?.responseData == data)
        #expect(error?.underlyingError == nil)
        #expect(error?.failingURL?.absoluteString == "http://example.test/resource")
    }

    @Test func contentTypeErrorIsChainedUnderStatusError() {
        let serializer = HTTPResponseSerializer()
        serializer.acceptableContentTypes = ["application/json"]
        let result = serializer.serializeResponse(makeResponse(status: 500, contentType: "text/html"), data: Data("<p>".utf8))
        guard case .unacceptableStatusCode(let response, _, let underlying?)? = result.error else {
            Issue.record("expected a chained status error, got \(String(describing: result.error))")
            return
        }
        #expect(response.statusCode == 500)
        #expect(result.error?.description == "Request failed: internal server error (500)")
        #expect(underlying.description == "Request failed: unacceptable content-type: text/html")
        guard case .unacceptableContentType("text/html", _, _) = underlying else {
            Issue.record("expected the content-type error")
            return
        }
    }

    @Test func contentTypeErrorOnlyWithDataAndURL() throws {
        let serializer = HTTPResponseSerializer()
        serializer.acceptableContentTypes = ["application/json"]
        // Invalid, but AFN builds no error for empty data.
        let empty = serializer.validation(makeResponse(contentType: "text/html"), data: Data())
        #expect(!empty.isValid)
        #expect(empty.error == nil)
        try serializer.validate(makeResponse(contentType: "text/html"), data: nil)
        // No MIME type and no data is acceptable.
        #expect(serializer.validation(makeResponse(), data: nil).isValid)
        // No MIME type with data is not.
        let noType = serializer.validation(makeResponse(), data: Data("x".utf8))
        #expect(!noType.isValid)
        #expect(noType.error?.description == "Request failed: unacceptable content-type: (null)")
    }

    @Test func nilSettingsAcceptEverything() throws {
        let serializer = HTTPResponseSerializer()
        serializer.acceptableStatusCodes = nil
        #expect(try serializer.responseObject(for: makeResponse(status: 503), data: nil) == nil)
        serializer.acceptableStatusCodes = IndexSet([200, 418])
        #expect(throws: CourierError.self) { try serializer.validate(makeResponse(status: 201), data: nil) }
        try serializer.validate(makeResponse(status: 418), data: nil)
    }

    /// Validation reads a contiguous set as a range and any other as the set: every shape
    /// accepts exactly its members, a later change applies, and nil accepts even a negative code.
    @Test func statusCodeSetsOfEveryShape() throws {
        let serializer = HTTPResponseSerializer()
        serializer.acceptableStatusCodes = IndexSet(integersIn: 200..<400)
        try serializer.validate(makeResponse(status: 302), data: nil)
        #expect(throws: CourierError.self) { try serializer.validate(makeResponse(status: 400), data: nil) }
        #expect(throws: CourierError.self) { try serializer.validate(makeResponse(status: 199), data: nil) }
        serializer.acceptableStatusCodes = IndexSet()
        #expect(throws: CourierError.self) { try serializer.validate(makeResponse(status: 200), data: nil) }
        var gaps = IndexSet(integersIn: 200..<205)
        gaps.insert(integersIn: 300..<302)
        serializer.acceptableStatusCodes = gaps
        try serializer.validate(makeResponse(status: 301), data: nil)
        #expect(throws: CourierError.self) { try serializer.validate(makeResponse(status: 205), data: nil) }
        let negative = SerializerInput(statusCode: -1, mimeType: nil, textEncodingName: nil, hasURL: true) {
            makeResponse(status: 500)
        }
        #expect(serializer.validation(negative, data: nil).isValid == false)
        serializer.acceptableStatusCodes = nil
        #expect(serializer.validation(negative, data: nil).isValid)
        serializer.acceptableStatusCodes = IndexSet(integersIn: 200..<300)
        #expect(serializer.validation(negative, data: nil).isValid == false)
        #expect(serializer.acceptableStatusCodes == IndexSet(integersIn: 200..<300))
    }

    @Test func contentTypesCompareCaseInsensitivelyAndReadBackAsSet() throws {
        let serializer = HTTPResponseSerializer(acceptableContentTypes: ["Application/JSON"])
        let body = Data("{}".utf8)
        try serializer.validate(makeResponse(contentType: "application/json"), data: body)
        try serializer.validate(makeResponse(contentType: "APPLICATION/JSON; charset=utf-8"), data: body)
        #expect(serializer.acceptableContentTypes == ["Application/JSON"])
        // A later change replaces the list entirely.
        serializer.acceptableContentTypes = ["TEXT/Plain"]
        try serializer.validate(makeResponse(contentType: "text/plain"), data: body)
        #expect(throws: CourierError.self) { try serializer.validate(makeResponse(contentType: "application/json"), data: body) }
        #expect(serializer.acceptableContentTypes == ["TEXT/Plain"])
    }

    @Test func noResponseIsValid() throws {
        try HTTPResponseSerializer().validate(nil, data: Data("x".utf8))
    }
}
