#if canImport(FoundationNetworking)
import Foundation
public import FoundationNetworking
#else
public import Foundation
#endif

/// A response and what a serializer made of it, with the `HTTPURLResponse` (the result of
/// ``URLSessionManager/data(for:serializer:interceptor:)``, AFNetworking's shape awaited). The typed
/// verbs return ``HTTPTypesResponse`` instead, which makes no Foundation response.
public struct SessionResponse<Value: Sendable>: Sendable {
    /// The serializer's output.
    public var value: Value
    /// The HTTP response.
    public var response: HTTPURLResponse
}
