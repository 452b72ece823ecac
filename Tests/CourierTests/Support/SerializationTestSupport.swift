import Courier
import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Builds an `HTTPURLResponse` as the session layer will hand it to serializers.
func makeResponse(
    status: Int = 200,
    contentType: String? = nil,
    url: String = "http://example.test/resource",
    headers: [String: String] = [:]
) -> HTTPURLResponse {
    var fields = headers
    if let contentType { fields["Content-Type"] = contentType }
    guard let url = URL(string: url),
        let response = HTTPURLResponse(url: url, statusCode: status, httpVersion: "HTTP/1.1", headerFields: fields)
    else { preconditionFailure("test response could not be built") }
    return response
}

/// The string dictionary in the `data` an echo endpoint (`/post`, `/put`) received as a
/// property-list body, parsed back: what the server got, independent of how the XML was laid out.
func propertyList(echoedIn echo: JSONValue) throws -> [String: String]? {
    guard let text = echo["data"]?.stringValue else { return nil }
    return try PropertyListSerialization.propertyList(from: Data(text.utf8), format: nil) as? [String: String]
}
