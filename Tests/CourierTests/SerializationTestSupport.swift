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
