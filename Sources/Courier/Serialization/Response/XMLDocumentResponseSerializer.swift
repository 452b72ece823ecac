public import Foundation
#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif
#if canImport(FoundationXML)
public import FoundationXML
#endif
import Synchronization

/// AFNetworking's `AFXMLDocumentResponseSerializer` (macOS-only in AFN; FoundationXML here):
/// validates, checks that the XML is well-formed, then builds an `XMLDocument`.
///
/// On Linux `XMLDocument(data:)` recovers from malformed input (`<a><b></a>` loads without an
/// error), so the bytes are first run through `XMLParser`, whose `parserError` and delegate
/// errors are checked; malformed XML throws
/// ``CourierError/responseSerializationFailed(reason:response:data:underlying:)``.
/// Acceptable content types: `application/xml`, `text/xml`. `XMLDocument` is not `Sendable`:
/// the output, ``LockedXMLDocument``, keeps it behind a lock. Thread-safe.
public final class XMLDocumentResponseSerializer: HTTPResponseSerializerWrapper {
    /// Holds the validation settings.
    public let base: HTTPResponseSerializer
    private let settings: LockedValue<XMLNode.Options>

    /// Creates a serializer; `options` are passed to `XMLDocument(data:options:)`.
    public init(options: XMLNode.Options = []) {
        base = HTTPResponseSerializer(acceptableContentTypes: ["application/xml", "text/xml"])
        settings = LockedValue(options)
    }

    /// Options for `XMLDocument(data:options:)`. Default none.
    public var options: XMLNode.Options {
        get { settings.value }
        set { settings.value = newValue }
    }

    /// The document; nil when validation failed on content type or the body is empty.
    /// - Throws: the validation error, or a serialization error for malformed XML (with the
    ///   validation error chained).
    public func responseObject(for response: HTTPURLResponse?, data: Data?) throws -> LockedXMLDocument? {
        let validation = base.validation(response, data: data)
        guard !validation.skipsParsing, let data, !data.isEmpty else {
            if let error = validation.error { throw error }
            return nil
        }
        if let problem = XMLWellFormedness.problem(in: data) {
            throw CourierError.responseSerializationFailed(
                reason: "malformed XML: \(problem)", response: response, data: data, underlying: validation.error)
        }
        let document: XMLDocument
        do {
            document = try XMLDocument(data: data, options: options)
        } catch {
            throw CourierError.responseSerializationFailed(
                reason: "XMLDocument: \(error)", response: response, data: data, underlying: validation.error)
        }
        if let error = validation.error { throw error }
        return LockedXMLDocument(document)
    }
}

/// An `XMLDocument` behind a mutex, so a parsed document can cross threads. Read it inside
/// ``withDocument(_:)``; return only `Sendable` values (strings, counts) from the closure.
public final class LockedXMLDocument: Sendable {
    private let document: Mutex<XMLDocument>

    init(_ document: sending XMLDocument) {
        self.document = Mutex(document)
    }

    /// Runs `body` with exclusive access to the document.
    public func withDocument<Result: Sendable>(_ body: (XMLDocument) throws -> Result) rethrows -> Result {
        try document.withLock { document in try body(document) }
    }

    /// The root element's name, e.g. `slideshow`.
    public var rootElementName: String? { withDocument { $0.rootElement()?.name } }

    /// The document as XML text.
    public var xmlString: String { withDocument { $0.xmlString } }
}

/// Runs `XMLParser` over data and reports the first error, because on Linux `parse()` can
/// return true for malformed input.
enum XMLWellFormedness {
    private final class Delegate: NSObject, XMLParserDelegate {
        var error: (any Error)?
        var problem: String?
        var openElements: [String] = []
        var sawRoot = false

        func parser(
            _ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?,
            qualifiedName: String?, attributes: [String: String] = [:]
        ) {
            if openElements.isEmpty && sawRoot && problem == nil { problem = "more than one root element" }
            sawRoot = true
            openElements.append(qualifiedName ?? elementName)
        }

        func parser(_ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName: String?) {
            let name = qualifiedName ?? elementName
            if openElements.last == name {
                openElements.removeLast()
            } else if problem == nil {
                problem = "end tag </\(name)> does not match <\(openElements.last ?? "")>"
            }
        }

        func parser(_ parser: XMLParser, parseErrorOccurred parseError: any Error) {
            if error == nil { error = parseError }
        }
        func parser(_ parser: XMLParser, validationErrorOccurred validationError: any Error) {
            if error == nil { error = validationError }
        }
    }

    static func problem(in data: Data) -> String? {
        let parser = XMLParser(data: data)
        let delegate = Delegate()
        parser.delegate = delegate
        let succeeded = parser.parse()
        if let error = delegate.error ?? parser.parserError { return String(describing: error) }
        if let problem = delegate.problem { return problem }
        if let open = delegate.openElements.last { return "element <\(open)> is not closed" }
        if !delegate.sawRoot { return "no root element" }
        return succeeded ? nil : "the parser stopped"
    }
}
