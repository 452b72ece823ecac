public import Foundation
#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

extension URLSessionManager {
    /// A WebSocket task for `url` (`ws://` or `wss://`), offering `protocols` as subprotocols.
    /// Created suspended: ``SessionTask/resume()`` opens it. The manager's request serializer
    /// headers (for an ``HTTPSessionManager``), the configuration's headers, the cookie jar and
    /// the interceptor apply to the handshake.
    public func webSocketTask(with url: URL, protocols: [String] = []) -> WebSocketTask {
        var request = URLRequest(url: url)
        if let serializer = (self as? HTTPSessionManager)?.requestSerializer,
            let serialized = try? serializer.serialize(request, parameters: nil)
        {
            request = serialized
        }
        if !protocols.isEmpty {
            request.setValue(protocols.joined(separator: ", "), forHTTPHeaderField: "Sec-WebSocket-Protocol")
        }
        return webSocketTask(with: request)
    }

    /// A WebSocket task for `request`: its URL (`ws`, `wss`) and header fields (subprotocols
    /// in `Sec-WebSocket-Protocol`) make the handshake, with the configuration's headers, the
    /// cookie jar and the interceptor.
    public func webSocketTask(with request: URLRequest) -> WebSocketTask {
        let (task, runner) = register({ WebSocketTask(taskIdentifier: $0, request: request) }) { [environment] task in
            WebSocketTaskRunner(task: task, environment: environment)
        }
        task.runnerStore.withLock { $0 = runner }
        return task
    }
}
