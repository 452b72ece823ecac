import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@Suite struct ParameterEncoderTests {
    struct Query: Encodable {
        var page: Int
        var flag: Bool
        var name: String?
        var tags: [String]
        var nested: Nested
        var when: Date
        var blob: Data
        struct Nested: Encodable { var z: Double }
    }

    @Test func encodesWithAFNScalarRules() throws {
        let query = Query(
            page: 2, flag: true, name: nil, tags: ["a", "b"], nested: .init(z: 0.5),
            when: Date(timeIntervalSinceReferenceDate: 0), blob: Data([1, 2, 3]))
        let parameters = try ParameterEncoder().encode(query)
        #expect(parameters["flag"] == .bool(true))
        #expect(parameters["name"] == nil)
        #expect(queryString(from: parameters)
            == "blob=AQID&flag=1&nested%5Bz%5D=0.5&page=2&tags%5B%5D=a&tags%5B%5D=b&when=2001-01-01T00%3A00%3A00Z")
    }

    @Test func dateStrategyIsConfigurable() throws {
        var encoder = ParameterEncoder()
        encoder.dateEncodingStrategy = .secondsSince1970
        let parameters = try encoder.encode(["when": Date(timeIntervalSince1970: 12)])
        #expect(parameters["when"] == .int(12))
    }

    @Test func topLevelMustBeKeyed() {
        #expect(throws: CourierError.self) { try ParameterEncoder().encode([1, 2]) }
    }
}
