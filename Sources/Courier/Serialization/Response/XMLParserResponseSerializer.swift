public import Foundation
#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif
#if canImport(FoundationXML)
public import FoundationXML
#endif

/// AFNetworking's `AFXMLParserResponseSerializer`: validates, then hands back the XML for an
/// `XMLParser` that has not started.
///
/// `XMLParser` is not `Sendable`, so the output is an ``XMLParserResponse`` holding the bytes;
/// call ``XMLParserResponse/makeParser()`` on the thread that will run it. Acceptable
/// content types: `application/xml`, `text/xml`. Like AFN, the XML is not checked here (an
/// `XMLParser` reports errors while it runs; on Linux check `parserError` after `parse()`,
/// which can return true for malformed input). Empty data gives nil. Thread-safe.
public final class XMLParserResponseSerializer: HTTPResponseSerializerWrapper {
    /// Holds the validation settings.
    public let base: HTTPResponseSerializer

    /// Creates a serializer accepting `application/xml` and `text/xml`.
    public init() {
        base = HTTPResponseSerializer(acceptableContentTypes: ["application/xml", "text/xml"])
    }

    /// The XML, ready for a parser; nil when validation failed on content type or the body is
    /// empty.
    /// - Throws: the validation error.
    public func responseObject(for response: HTTPURLResponse?, data: Data?) throws -> XMLParserResponse? {
        let validation = base.validation(response, data: data)
        if let error = validation.error { throw error }
        guard validation.isValid, let data, !data.isEmpty else { return nil }
        return XMLParserResponse(data: data)
    }
}

/// The body of an XML response, from which unstarted `XMLParser`s are made.
public struct XMLParserResponse: Sendable, Equatable {
    /// The XML bytes.
    public let data: Data

    /// Creates a response around `data`.
    public init(data: Data) { self.data = data }

    /// A new, unstarted parser over ``data`` (AFN's return value). Each call makes a new one.
    public func makeParser() -> XMLParser { XMLParser(data: data) }
}
