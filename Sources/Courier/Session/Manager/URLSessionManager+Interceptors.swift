import CourierEngine
public import Foundation
#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif
import Synchronization

extension URLSessionManager {
    /// The interceptor every task of this manager uses (adapting each attempt, deciding
    /// retries), read when a task starts; chained before a task's own. Default nil. Thread-safe.
    public var interceptor: (any RequestInterceptor)? {
        get { environment.settings.withLock { $0.interceptor } }
        set { environment.settings.withLock { $0.interceptor = newValue } }
    }

    /// ``dataTask(with:uploadProgress:downloadProgress:completionHandler:)`` with an
    /// interceptor for this task only (after the manager's ``interceptor``). Not resumed.
    @discardableResult
    public func dataTask(
        with request: URLRequest,
        interceptor: (any RequestInterceptor)?,
        uploadProgress: (@Sendable (Progress) -> Void)? = nil,
        downloadProgress: (@Sendable (Progress) -> Void)? = nil,
        completionHandler: (@Sendable (HTTPURLResponse?, (any Sendable)?, (any Error)?) -> Void)? = nil
    ) -> DataTask {
        let task = dataTask(
            with: request, uploadProgress: uploadProgress, downloadProgress: downloadProgress, completionHandler: completionHandler)
        task.snapshot.withLock { $0.interceptor = interceptor }
        return task
    }

    /// ``uploadTask(with:from:progress:completionHandler:)`` with an interceptor for this task
    /// only (after the manager's ``interceptor``); the `Data` body is sent again on a retry. Not resumed.
    @discardableResult
    public func uploadTask(
        with request: URLRequest,
        from bodyData: Data,
        interceptor: (any RequestInterceptor)?,
        progress: (@Sendable (Progress) -> Void)? = nil,
        completionHandler: (@Sendable (HTTPURLResponse?, (any Sendable)?, (any Error)?) -> Void)? = nil
    ) -> UploadTask {
        let task = uploadTask(with: request, from: bodyData, progress: progress, completionHandler: completionHandler)
        task.snapshot.withLock { $0.interceptor = interceptor }
        return task
    }

    /// ``uploadTask(with:fromFile:progress:completionHandler:)`` with an interceptor for this
    /// task only (after the manager's ``interceptor``); the file is read again from its start on
    /// a retry. Not resumed.
    @discardableResult
    public func uploadTask(
        with request: URLRequest,
        fromFile fileURL: URL,
        interceptor: (any RequestInterceptor)?,
        progress: (@Sendable (Progress) -> Void)? = nil,
        completionHandler: (@Sendable (HTTPURLResponse?, (any Sendable)?, (any Error)?) -> Void)? = nil
    ) -> UploadTask {
        let task = uploadTask(with: request, fromFile: fileURL, progress: progress, completionHandler: completionHandler)
        task.snapshot.withLock { $0.interceptor = interceptor }
        return task
    }

    /// ``downloadTask(with:progress:destination:completionHandler:)`` with an interceptor for
    /// this task only (after the manager's ``interceptor``). A retried attempt's file is removed;
    /// only the last attempt's body is moved to `destination`. Not resumed.
    @discardableResult
    public func downloadTask(
        with request: URLRequest,
        interceptor: (any RequestInterceptor)?,
        progress: (@Sendable (Progress) -> Void)? = nil,
        destination: (@Sendable (URL, HTTPURLResponse) -> URL)? = nil,
        completionHandler: (@Sendable (HTTPURLResponse?, URL?, (any Error)?) -> Void)? = nil
    ) -> DownloadTask {
        let task = downloadTask(with: request, progress: progress, destination: destination, completionHandler: completionHandler)
        task.snapshot.withLock { $0.interceptor = interceptor }
        return task
    }

    /// ``data(for:)`` with an interceptor for this request only (after the manager's
    /// ``interceptor``): awaits the last attempt's response and the manager's serializer's
    /// object. Cancelling the awaiting Swift task cancels the request (and any retry).
    /// - Throws: the last attempt's error, an adapt error, or the serializer's error.
    public func data(for request: URLRequest, interceptor: (any RequestInterceptor)?) async throws
        -> (object: (any Sendable)?, response: HTTPURLResponse)
    {
        try await run(request, serializer: nil, interceptor: interceptor)
    }
}

extension HTTPSessionManager {
    /// ``dataTask(httpMethod:urlString:parameters:headers:uploadProgress:downloadProgress:success:failure:)``
    /// with an interceptor for this task only (after the manager's ``URLSessionManager/interceptor``).
    /// Not resumed; nil (with `failure` called) when the request can't be serialized.
    @discardableResult
    public func dataTask(
        httpMethod method: String,
        urlString: String,
        parameters: Parameters?,
        headers: [String: String]?,
        interceptor: (any RequestInterceptor)?,
        uploadProgress: (@Sendable (Progress) -> Void)? = nil,
        downloadProgress: (@Sendable (Progress) -> Void)? = nil,
        success: (@Sendable (DataTask, (any Sendable)?) -> Void)?,
        failure: (@Sendable (DataTask?, any Error) -> Void)?
    ) -> DataTask? {
        let task = dataTask(
            httpMethod: method, urlString: urlString, parameters: parameters, headers: headers,
            uploadProgress: uploadProgress, downloadProgress: downloadProgress, success: success, failure: failure)
        task?.snapshot.withLock { $0.interceptor = interceptor }
        return task
    }
}
