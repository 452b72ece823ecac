import CourierEngine
import Foundation
import Testing

@testable import Courier

/// The completion notification's `userInfo` made from templates holds exactly the keys a
/// plain dictionary built key by key would, with the same values, for every combination of
/// present values, and is looked up with AFNetworking's string constants as observers do.
@Suite struct CompletionUserInfoTests {
    @Test(arguments: 0..<32)
    func everyCombinationMatchesAPlainDictionary(presence: Int) throws {
        let serializer = JSONResponseSerializer()
        let data = presence & 1 != 0 ? Data("body \(presence)".utf8) : nil
        let assetURL = presence & 2 != 0 ? URL(fileURLWithPath: "/tmp/asset-\(presence)") : nil
        let object: (any Sendable)? = presence & 4 != 0 ? ["n": presence] : nil
        let error: (any Error)? = presence & 8 != 0 ? CourierError.cancelled(url: URL(string: "http://e/\(presence)")) : nil
        let metrics = presence & 16 != 0 ? EngineMetrics(fetchStart: Date(timeIntervalSince1970: Double(presence))) : nil

        let userInfo = CompletionUserInfo.make(
            serializer: serializer, data: data, assetURL: assetURL, object: object, error: error, metrics: metrics)

        var expectedKeys: Set<String> = [SessionNotificationKey.responseSerializer]
        if data != nil { expectedKeys.insert(SessionNotificationKey.responseData) }
        if assetURL != nil { expectedKeys.insert(SessionNotificationKey.assetPath) }
        if object != nil { expectedKeys.insert(SessionNotificationKey.serializedResponse) }
        if error != nil { expectedKeys.insert(SessionNotificationKey.error) }
        if metrics != nil { expectedKeys.insert(SessionNotificationKey.metrics) }
        #expect(Set(userInfo.keys.compactMap { $0.base as? String }) == expectedKeys)
        #expect(userInfo.count == expectedKeys.count)

        #expect((userInfo[SessionNotificationKey.responseSerializer] as? JSONResponseSerializer) === serializer)
        #expect(userInfo[SessionNotificationKey.responseData] as? Data == data)
        #expect(userInfo[SessionNotificationKey.assetPath] as? URL == assetURL)
        let storedObject = (userInfo[SessionNotificationKey.serializedResponse] as? [String: Int])?["n"]
        #expect(storedObject == (object == nil ? nil : presence))
        let storedError = (userInfo[SessionNotificationKey.error] as? CourierError).map { String(describing: $0) }
        let givenError = error.map { String(describing: $0) }
        #expect(storedError == givenError)
        #expect(userInfo[SessionNotificationKey.metrics] as? EngineMetrics == metrics)
    }

    /// Two notifications made from the same template don't share values.
    @Test func eachNotificationHasItsOwnValues() {
        let serializer = HTTPResponseSerializer()
        let first = CompletionUserInfo.make(
            serializer: serializer, data: Data("first".utf8), assetURL: nil, object: nil, error: nil, metrics: nil)
        let second = CompletionUserInfo.make(
            serializer: serializer, data: Data("second".utf8), assetURL: nil, object: nil, error: nil, metrics: nil)
        #expect(first[SessionNotificationKey.responseData] as? Data == Data("first".utf8))
        #expect(second[SessionNotificationKey.responseData] as? Data == Data("second".utf8))
    }
}
