public import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// AFHTTPSessionManager's verbs in AFNetworking's block shape: each makes a data task through
/// ``HTTPSessionManager/dataTask(httpMethod:urlString:parameters:headers:uploadProgress:downloadProgress:success:failure:)``
/// and resumes it. The awaited forms are in `HTTPSessionManager+Async.swift`.
extension HTTPSessionManager {
    /// GET, resumed.
    @discardableResult
    public func get(
        _ urlString: String,
        parameters: Parameters? = nil,
        headers: [String: String]? = nil,
        progress: (@Sendable (Progress) -> Void)? = nil,
        success: (@Sendable (DataTask, (any Sendable)?) -> Void)?,
        failure: (@Sendable (DataTask?, any Error) -> Void)?
    ) -> DataTask? {
        resumed(dataTask(httpMethod: "GET", urlString: urlString, parameters: parameters, headers: headers,
                         downloadProgress: progress, success: success, failure: failure))
    }

    /// HEAD, resumed. Success gets no object.
    @discardableResult
    public func head(
        _ urlString: String,
        parameters: Parameters? = nil,
        headers: [String: String]? = nil,
        success: (@Sendable (DataTask) -> Void)?,
        failure: (@Sendable (DataTask?, any Error) -> Void)?
    ) -> DataTask? {
        resumed(dataTask(httpMethod: "HEAD", urlString: urlString, parameters: parameters, headers: headers,
                         success: { task, _ in success?(task) }, failure: failure))
    }

    /// POST, resumed.
    @discardableResult
    public func post(
        _ urlString: String,
        parameters: Parameters? = nil,
        headers: [String: String]? = nil,
        progress: (@Sendable (Progress) -> Void)? = nil,
        success: (@Sendable (DataTask, (any Sendable)?) -> Void)?,
        failure: (@Sendable (DataTask?, any Error) -> Void)?
    ) -> DataTask? {
        resumed(dataTask(httpMethod: "POST", urlString: urlString, parameters: parameters, headers: headers,
                         uploadProgress: progress, success: success, failure: failure))
    }

    /// PUT, resumed.
    @discardableResult
    public func put(
        _ urlString: String,
        parameters: Parameters? = nil,
        headers: [String: String]? = nil,
        success: (@Sendable (DataTask, (any Sendable)?) -> Void)?,
        failure: (@Sendable (DataTask?, any Error) -> Void)?
    ) -> DataTask? {
        resumed(dataTask(httpMethod: "PUT", urlString: urlString, parameters: parameters, headers: headers,
                         success: success, failure: failure))
    }

    /// PATCH, resumed.
    @discardableResult
    public func patch(
        _ urlString: String,
        parameters: Parameters? = nil,
        headers: [String: String]? = nil,
        success: (@Sendable (DataTask, (any Sendable)?) -> Void)?,
        failure: (@Sendable (DataTask?, any Error) -> Void)?
    ) -> DataTask? {
        resumed(dataTask(httpMethod: "PATCH", urlString: urlString, parameters: parameters, headers: headers,
                         success: success, failure: failure))
    }

    /// DELETE, resumed.
    @discardableResult
    public func delete(
        _ urlString: String,
        parameters: Parameters? = nil,
        headers: [String: String]? = nil,
        success: (@Sendable (DataTask, (any Sendable)?) -> Void)?,
        failure: (@Sendable (DataTask?, any Error) -> Void)?
    ) -> DataTask? {
        resumed(dataTask(httpMethod: "DELETE", urlString: urlString, parameters: parameters, headers: headers,
                         success: success, failure: failure))
    }

    private func resumed(_ task: DataTask?) -> DataTask? {
        task?.resume()
        return task
    }
}
