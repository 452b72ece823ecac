public import Foundation

/// Multipart uploads (AFNetworking's `POST:parameters:headers:constructingBodyWithBlock:...`):
/// the body is streamed part by part, never held whole in memory.
extension HTTPSessionManager {
    /// POSTs a `multipart/form-data` body: `parameters` become form parts, then
    /// `constructingBody` appends files, data or streams. Resumed. A serialization error (a
    /// missing file, say) calls `failure` asynchronously with a nil task and returns nil.
    @discardableResult
    public func post(
        _ urlString: String,
        parameters: Parameters?,
        headers: [String: String]?,
        constructingBody: (MultipartFormData) throws -> Void,
        progress: (@Sendable (Progress) -> Void)?,
        success: (@Sendable (UploadTask, (any Sendable)?) -> Void)?,
        failure: (@Sendable (UploadTask?, any Error) -> Void)?
    ) -> UploadTask? {
        let multipart: MultipartRequest
        do {
            multipart = try makeMultipartRequest(
                urlString: urlString, parameters: parameters, headers: headers, constructingBody: constructingBody)
        } catch {
            let group = completionGroup
            group.enter()
            completionQueue.async {
                failure?(nil, error)
                group.leave()
            }
            return nil
        }
        let box = TaskBox<UploadTask>()
        let task = uploadTask(
            withStreamedRequest: multipart.urlRequest, body: multipart.makeRequestBody(),
            bodyFactory: { multipart.makeRequestBody() }, progress: progress,
            completionReadsResponse: false  // the blocks get the task: no HTTPURLResponse unless read
        ) { _, object, error in
            guard let task = box.task else { return }
            if let error { failure?(task, error) } else { success?(task, object) }
        }
        box.task = task
        task.resume()
        return task
    }

    /// The multipart request `post(_:parameters:headers:constructingBody:...)` sends.
    public func makeMultipartRequest(
        urlString: String,
        parameters: Parameters?,
        headers: [String: String]?,
        constructingBody: (MultipartFormData) throws -> Void
    ) throws -> MultipartRequest {
        guard let url = BaseURLResolution.resolve(urlString, against: baseURL) else {
            throw CourierError.requestSerializationFailed(.invalidURL(urlString))
        }
        let serializer: HTTPRequestSerializer
        switch requestSerializer {
        case let http as HTTPRequestSerializer: serializer = http
        case let wrapper as any HTTPRequestSerializerWrapper: serializer = wrapper.base
        default: serializer = HTTPRequestSerializer()
        }
        var multipart = try serializer.multipartFormRequest(
            method: "POST", urlString: url.absoluteString, parameters: parameters, constructingBody: constructingBody)
        for (name, value) in headers ?? [:] {
            multipart.urlRequest.setValue(value, forHTTPHeaderField: name)
        }
        return multipart
    }
}
