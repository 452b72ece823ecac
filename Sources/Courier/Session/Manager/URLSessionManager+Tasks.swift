public import CourierEngine
public import Foundation
#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

/// AFURLSessionManager's task factories in AFNetworking's block shape: data, upload and download
/// tasks, made suspended (call ``SessionTask/resume()``), each with its own ``TaskDelegate``.
extension URLSessionManager {
    /// A task that sends `request` (with its `httpBody`, if any) and gathers the response body
    /// in memory. Not resumed. `completionHandler` gets the response, the serializer's object
    /// and the error; both object and error may be set (AFN's status-failure case).
    @discardableResult
    public func dataTask(
        with request: URLRequest,
        uploadProgress: (@Sendable (Progress) -> Void)? = nil,
        downloadProgress: (@Sendable (Progress) -> Void)? = nil,
        completionHandler: (@Sendable (HTTPURLResponse?, (any Sendable)?, (any Error)?) -> Void)? = nil
    ) -> DataTask {
        register(
            { DataTask(taskIdentifier: $0, request: request) }, kind: .data,
            body: Self.body(of: request),
            setup: TaskSetup(uploadProgress: uploadProgress, downloadProgress: downloadProgress, completion: completionHandler))
    }

    /// ``dataTask(with:uploadProgress:downloadProgress:completionHandler:)`` for a completion
    /// that ignores its `HTTPURLResponse` argument (AFNetworking's success and failure blocks,
    /// which get the task): it receives nil unless one was made anyway, and a valid response
    /// with a built-in serializer makes none (``TaskSetup/completionReadsResponse``).
    func dataTask(
        with request: URLRequest,
        uploadProgress: (@Sendable (Progress) -> Void)?,
        downloadProgress: (@Sendable (Progress) -> Void)?,
        ignoringResponse completion: @escaping @Sendable ((any Sendable)?, (any Error)?) -> Void
    ) -> DataTask {
        var setup = TaskSetup(
            uploadProgress: uploadProgress, downloadProgress: downloadProgress, completion: { _, object, error in completion(object, error) })
        setup.completionReadsResponse = false
        return register(
            { DataTask(taskIdentifier: $0, request: request) }, kind: .data, body: Self.body(of: request), setup: setup)
    }

    /// A task that uploads the file at `fileURL` as the body, streamed from disk. Not resumed.
    @discardableResult
    public func uploadTask(
        with request: URLRequest,
        fromFile fileURL: URL,
        progress: (@Sendable (Progress) -> Void)? = nil,
        completionHandler: (@Sendable (HTTPURLResponse?, (any Sendable)?, (any Error)?) -> Void)? = nil
    ) -> UploadTask {
        register(
            { UploadTask(taskIdentifier: $0, request: request) }, kind: .upload,
            body: .file(path: fileURL.path), setup: TaskSetup(uploadProgress: progress, completion: completionHandler))
    }

    /// A task that uploads `bodyData`. Not resumed.
    @discardableResult
    public func uploadTask(
        with request: URLRequest,
        from bodyData: Data,
        progress: (@Sendable (Progress) -> Void)? = nil,
        completionHandler: (@Sendable (HTTPURLResponse?, (any Sendable)?, (any Error)?) -> Void)? = nil
    ) -> UploadTask {
        register(
            { UploadTask(taskIdentifier: $0, request: request) }, kind: .upload,
            body: .data(bodyData), setup: TaskSetup(uploadProgress: progress, completion: completionHandler))
    }

    /// A task whose body comes from a stream: `body` (an engine ``CourierEngine/RequestBody``,
    /// e.g. `.stream(length:)` or `.sequence(_:length:)`), or when nil the request's
    /// `httpBodyStream`. Without a known length the body is sent chunked. Not resumed.
    @discardableResult
    public func uploadTask(
        withStreamedRequest request: URLRequest,
        body: RequestBody? = nil,
        progress: (@Sendable (Progress) -> Void)? = nil,
        completionHandler: (@Sendable (HTTPURLResponse?, (any Sendable)?, (any Error)?) -> Void)? = nil
    ) -> UploadTask {
        uploadTask(withStreamedRequest: request, body: body, bodyFactory: nil, progress: progress, completionHandler: completionHandler)
    }

    /// The streamed upload, with a factory that makes the body again when a redirect (307,
    /// 308) or an authentication retry must resend it. `completionReadsResponse`: see
    /// ``TaskSetup/completionReadsResponse`` (false for AFNetworking's success and failure blocks).
    func uploadTask(
        withStreamedRequest request: URLRequest,
        body: RequestBody?,
        bodyFactory: (@Sendable () -> RequestBody?)?,
        progress: (@Sendable (Progress) -> Void)?,
        completionReadsResponse: Bool = true,
        completionHandler: (@Sendable (HTTPURLResponse?, (any Sendable)?, (any Error)?) -> Void)?
    ) -> UploadTask {
        let streamed = body ?? Self.body(of: request)
        var setup = TaskSetup(uploadProgress: progress, completion: completionHandler, bodyFactory: bodyFactory)
        setup.completionReadsResponse = completionReadsResponse
        return register(
            { UploadTask(taskIdentifier: $0, request: request) }, kind: .upload, body: streamed, setup: setup)
    }

    /// A task that streams the response body to a temporary file, then moves it to
    /// `destination(temporaryURL, response)`. The completion's URL is where the file ended up.
    /// A failed move posts ``Foundation/NSNotification/Name/courierDownloadTaskDidFailToMoveFile``
    /// and is not reported as the task's error (as in AFNetworking). Not resumed.
    @discardableResult
    public func downloadTask(
        with request: URLRequest,
        progress: (@Sendable (Progress) -> Void)? = nil,
        destination: (@Sendable (URL, HTTPURLResponse) -> URL)? = nil,
        completionHandler: (@Sendable (HTTPURLResponse?, URL?, (any Error)?) -> Void)? = nil
    ) -> DownloadTask {
        register(
            { DownloadTask(taskIdentifier: $0, request: request) }, kind: .download(destination: destination),
            body: Self.body(of: request),
            setup: TaskSetup(downloadProgress: progress, completion: Self.fileURLCompletion(completionHandler)))
    }

    /// A task that continues a download from `resumeData`: it asks for the bytes after the
    /// partial file's end (`Range`, plus `If-Range` with the validator), appends them on a 206
    /// that starts exactly there, starts the file over (truncated, from byte 0) on 200 (unless
    /// its `allowsRestart` is false: then a 200 fails with
    /// ``CourierError/invalidResumeResponse(url:reason:)`` and the file is kept), and
    /// finishes at once on 416 when the file is already whole. Resume data without a validator
    /// starts over from byte 0 unless its `allowsResumeWithoutValidator` is set. A 206 that
    /// starts elsewhere, has a malformed `Content-Range` or another complete length fails with
    /// ``CourierError/invalidResumeResponse(url:reason:)``; a partial file that is not a regular
    /// file (a directory, a symbolic link, a device) fails with
    /// ``CourierError/cannotWriteDownloadFile(path:reason:)``; neither touches the file. The
    /// did-resume block and the progress start from the offset. Then, as any download, the
    /// file moves to `destination` (returning the partial file's own URL keeps it in place).
    /// Not resumed.
    @discardableResult
    public func downloadTask(
        withResumeData resumeData: DownloadResumeData,
        progress: (@Sendable (Progress) -> Void)? = nil,
        destination: (@Sendable (URL, HTTPURLResponse) -> URL)? = nil,
        completionHandler: (@Sendable (HTTPURLResponse?, URL?, (any Error)?) -> Void)? = nil
    ) -> DownloadTask {
        let request = resumeData.rangeRequest(offset: resumeData.resumeOffset)
        return register(
            { DownloadTask(taskIdentifier: $0, request: request) }, kind: .download(destination: destination),
            body: Self.body(of: request),
            setup: TaskSetup(
                downloadProgress: progress, completion: Self.fileURLCompletion(completionHandler), resumeData: resumeData))
    }

    /// A download's completion in the general shape: the response object is the file's URL.
    private static func fileURLCompletion(
        _ handler: (@Sendable (HTTPURLResponse?, URL?, (any Error)?) -> Void)?
    ) -> TaskSetup.Completion? {
        guard let handler else { return nil }
        return { response, object, error in handler(response, object as? URL, error) }
    }

    static func body(of request: URLRequest) -> RequestBody? {
        if let data = request.httpBody { return .data(data) }
        if let stream = request.httpBodyStream {
            let length = request.value(forHTTPHeaderField: "Content-Length").flatMap(Int64.init)
            return InputStreamBody.make(stream, length: length)
        }
        return nil
    }
}
