public import Foundation
#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif
import Synchronization

/// AFNetworking's `AFHTTPSessionManager`: a ``URLSessionManager`` with a base URL, a request
/// serializer and the HTTP verbs, in AFNetworking's block shape and in Swift's `async` shape.
///
/// ```swift
/// let manager = HTTPSessionManager(baseURL: URL(string: "https://api.example.com/v1"))
/// manager.get("users", parameters: ["page": 1], headers: nil, progress: nil,
///             success: { task, object in print(object ?? "nil") },
///             failure: { task, error in print(error) })
///
/// let (object, response) = try await manager.get("users", parameters: ["page": 1])
/// ```
public final class HTTPSessionManager: URLSessionManager, @unchecked Sendable {
    /// The base URL relative URL strings resolve against. A non-empty path gets a trailing slash.
    public let baseURL: URL?
    private let serializerBox: Mutex<any RequestSerializer> = Mutex(HTTPRequestSerializer())

    /// Creates a manager whose requests resolve against `baseURL` (AFN §1.2). Request
    /// serializer: ``HTTPRequestSerializer``; response serializer: ``JSONResponseSerializer``.
    public init(baseURL: URL? = nil, configuration: SessionConfiguration = .default) {
        self.baseURL = baseURL.map(BaseURLResolution.normalizedBaseURL)
        super.init(configuration: configuration)
    }

    /// Sets ``URLSessionManager/securityPolicy``, refusing pinning without https: AFNetworking
    /// raises an "Invalid Security Policy" exception when the pinning mode is not
    /// ``SSLPinningMode/none`` and the base URL's scheme is not `https` (including a nil base
    /// URL); a `wss` base URL, for a manager that opens WebSockets, is secure too. Swift has no
    /// exceptions to raise, so this method throws.
    /// - Throws: ``CourierError/invalidSecurityPolicy(reason:)`` in that case.
    public override func setSecurityPolicy(_ policy: SecurityPolicy) throws {
        try super.setSecurityPolicy(policy)
    }

    override func validate(_ policy: SecurityPolicy) throws {
        guard policy.pinningMode != .none else { return }
        guard let scheme = baseURL?.scheme?.lowercased(), scheme == "https" || scheme == "wss" else {
            throw CourierError.invalidSecurityPolicy(
                reason: "A security policy configured with \(policy.pinningMode) pinning can only be applied on a manager "
                    + "with a secure base URL (i.e. https)")
        }
    }

    /// Builds the requests. Default ``HTTPRequestSerializer``.
    public var requestSerializer: any RequestSerializer {
        get { serializerBox.withLock { $0 } }
        set { serializerBox.withLock { $0 = newValue } }
    }

    // MARK: - Block shape

    /// A data task for `method` on `urlString` (resolved against ``baseURL``), with
    /// `parameters` serialized by ``requestSerializer`` and `headers` applied last (they win
    /// over everything). Not resumed. When serialization fails, `failure` is called
    /// asynchronously on the completion queue with a nil task, and nil is returned.
    @discardableResult
    public func dataTask(
        httpMethod method: String,
        urlString: String,
        parameters: Parameters?,
        headers: [String: String]?,
        uploadProgress: (@Sendable (Progress) -> Void)? = nil,
        downloadProgress: (@Sendable (Progress) -> Void)? = nil,
        success: (@Sendable (DataTask, (any Sendable)?) -> Void)?,
        failure: (@Sendable (DataTask?, any Error) -> Void)?
    ) -> DataTask? {
        let request: URLRequest
        do {
            request = try makeRequest(method: method, urlString: urlString, parameters: parameters, headers: headers)
        } catch {
            completionGroup.enter()
            let group = completionGroup
            completionQueue.async {
                failure?(nil, error)
                group.leave()
            }
            return nil
        }
        let taskBox = TaskBox<DataTask>()
        // The blocks get the task, not the HTTPURLResponse: none is made unless something reads it.
        let task = dataTask(
            with: request, uploadProgress: uploadProgress, downloadProgress: downloadProgress,
            ignoringResponse: { object, error in
                guard let task = taskBox.task else { return }
                if let error {
                    failure?(task, error)
                } else {
                    success?(task, object)
                }
            })
        taskBox.task = task
        return task
    }


    // MARK: - Requests

    /// The request `dataTask(httpMethod:...)` would send.
    /// - Throws: ``CourierError/requestSerializationFailed(_:)``.
    public func makeRequest(
        method: String, urlString: String, parameters: Parameters?, headers: [String: String]?
    ) throws -> URLRequest {
        guard let url = BaseURLResolution.resolve(urlString, against: baseURL) else {
            throw CourierError.requestSerializationFailed(.invalidURL(urlString))
        }
        var request = try requestSerializer.request(method: method, urlString: url.absoluteString, parameters: parameters)
        for (name, value) in headers ?? [:] {
            request.setValue(value, forHTTPHeaderField: name)
        }
        return request
    }
}
