public import CourierEngine
public import Foundation
#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

/// A multipart request ready to send: the `URLRequest` (method, URL, headers with
/// `Content-Type: multipart/form-data; boundary=…` and the exact `Content-Length`) and the
/// form that produces its body.
///
/// How to send it: through `HTTPEngine`, use ``makeRequestBody()`` as the `EngineRequest`'s
/// body (streamed, bounded memory); or write the body to a file with
/// ``HTTPRequestSerializer/requestWithMultipartFormRequest(_:writingStreamContentsToFile:)``
/// and upload that file; or, for `URLSession`-style consumers, set `httpBodyStream` from
/// ``MultipartFormData/makeInputStream()``. `urlRequest.httpBody` and `httpBodyStream` stay
/// nil here: the body is never held in memory. A form with no parts gives a request with no body and no multipart
/// headers (``formData`` nil).
public struct MultipartRequest: Sendable {
    /// The request, body excluded.
    public var urlRequest: URLRequest
    /// The form, or nil when no part was appended.
    public let formData: MultipartFormData?

    /// Creates a multipart request.
    public init(urlRequest: URLRequest, formData: MultipartFormData?) {
        self.urlRequest = urlRequest
        self.formData = formData
    }

    /// The streamed body for `HTTPEngine`, or nil when the form has no parts.
    public func makeRequestBody() -> RequestBody? { formData?.makeRequestBody() }
}

extension HTTPRequestSerializer {
    /// Builds a multipart request: AFN's
    /// `multipartFormRequestWithMethod:URLString:parameters:constructingBodyWithBlock:error:`.
    ///
    /// The request gets the method, URL, request properties and default headers (no
    /// URL-encoded body). `parameters` are flattened with the query-string key rules (`a[b]`,
    /// `a[]`, sets under the same key) and each becomes a form-data part: `null` as empty
    /// data, others as their ``ParameterValue/description`` in ``stringEncoding``. Then
    /// `constructingBody` appends the caller's parts. With at least one part the request gets
    /// `Content-Type: multipart/form-data; boundary=…` and the exact `Content-Length`.
    /// - Throws: ``CourierError/RequestSerializationReason/multipartMethodNotAllowed(_:)`` for
    ///   GET and HEAD (AFN asserts), ``CourierError/RequestSerializationReason/invalidURL(_:)``,
    ///   ``CourierError/RequestSerializationReason/stringEncodingFailed(_:)``,
    ///   ``CourierError/RequestSerializationReason/bodyStreamFailed(_:)`` when a part declares a
    ///   negative length or the lengths add up past `Int64.max`, and whatever
    ///   `constructingBody` throws (such as a missing file).
    public func multipartFormRequest(
        method: String,
        urlString: String,
        parameters: Parameters? = nil,
        constructingBody: (MultipartFormData) throws -> Void = { _ in }
    ) throws -> MultipartRequest {
        let uppercased = method.uppercased()
        guard uppercased != "GET", uppercased != "HEAD" else {
            throw CourierError.requestSerializationFailed(.multipartMethodNotAllowed(method))
        }
        let state = snapshot
        var request = try makeRequest(method: method, urlString: urlString, state: state)
        Self.applyDefaultHeaders(state.headers, to: &request)
        let form = MultipartFormData(stringEncoding: state.stringEncoding)
        for pair in QueryStringEncoding.pairs(from: parameters ?? [:]) {
            let text = pair.value.description  // `null` describes itself as ""
            guard let data = text.data(using: state.stringEncoding) else {
                throw CourierError.requestSerializationFailed(.stringEncodingFailed(state.stringEncoding))
            }
            form.appendPart(formData: data, name: pair.field)
        }
        try constructingBody(form)
        guard !form.isEmpty else { return MultipartRequest(urlRequest: request, formData: nil) }
        request.setValue(form.contentType, forHTTPHeaderField: "Content-Type")
        request.setValue(String(try form.checkedContentLength()), forHTTPHeaderField: "Content-Length")
        return MultipartRequest(urlRequest: request, formData: form)
    }

    /// Writes the multipart body to `fileURL` and returns the request to upload it with
    /// (Content-Length kept, no body stream): AFN's
    /// `requestWithMultipartFormRequest:writingStreamContentsToFile:completionHandler:`, for
    /// servers that need a Content-Length with a streamed upload (#1398). A form with no parts
    /// writes an empty file.
    /// - Throws: ``CourierError/RequestSerializationReason/bodyFileWriteFailed(path:reason:)``
    ///   or a part's read error.
    public func requestWithMultipartFormRequest(
        _ request: MultipartRequest,
        writingStreamContentsToFile fileURL: URL
    ) async throws -> URLRequest {
        if let form = request.formData {
            try await form.writeBody(to: fileURL)
        } else if !FileManager.default.createFile(atPath: fileURL.path, contents: Data()) {
            throw CourierError.requestSerializationFailed(
                .bodyFileWriteFailed(path: fileURL.path, reason: "cannot create the file"))
        }
        var urlRequest = request.urlRequest
        urlRequest.httpBodyStream = nil
        urlRequest.httpBody = nil
        return urlRequest
    }
}

extension HTTPRequestSerializerWrapper {
    /// See ``HTTPRequestSerializer/multipartFormRequest(method:urlString:parameters:constructingBody:)``.
    public func multipartFormRequest(
        method: String,
        urlString: String,
        parameters: Parameters? = nil,
        constructingBody: (MultipartFormData) throws -> Void = { _ in }
    ) throws -> MultipartRequest {
        try base.multipartFormRequest(
            method: method, urlString: urlString, parameters: parameters, constructingBody: constructingBody)
    }

    /// See ``HTTPRequestSerializer/requestWithMultipartFormRequest(_:writingStreamContentsToFile:)``.
    public func requestWithMultipartFormRequest(
        _ request: MultipartRequest,
        writingStreamContentsToFile fileURL: URL
    ) async throws -> URLRequest {
        try await base.requestWithMultipartFormRequest(request, writingStreamContentsToFile: fileURL)
    }
}
