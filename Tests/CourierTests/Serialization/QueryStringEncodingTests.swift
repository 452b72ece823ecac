import Foundation
import Testing

@testable import Courier

@Suite struct QueryStringEncodingTests {
    @Test func afnGoldenSimpleDictionary() {
        #expect(queryString(from: ["key": "value", "key1": "value&"]) == "key=value&key1=value%26")
    }

    @Test func nestedDictionariesSortAtEveryLevel() {
        let parameters: Parameters = ["z": 1, "a": ["y": "2", "b": ["d": 4, "c": 3]]]
        #expect(queryString(from: parameters) == "a%5Bb%5D%5Bc%5D=3&a%5Bb%5D%5Bd%5D=4&a%5By%5D=2&z=1")
    }

    @Test func arraysUseEmptyBracketsInOrder() {
        #expect(queryString(from: ["c": [3, 1, 2]]) == "c%5B%5D=3&c%5B%5D=1&c%5B%5D=2")
        #expect(queryString(from: ["c": [["b": 1, "a": 2]]]) == "c%5B%5D%5Ba%5D=2&c%5B%5D%5Bb%5D=1")
    }

    @Test func setsSortUnderTheSameKey() {
        #expect(queryString(from: ["d": .set(["y", "x", "z"])]) == "d=x&d=y&d=z")
    }

    @Test func nullGivesABareKey() {
        #expect(queryString(from: ["e": .null, "f": nil]) == "e&f")
    }

    @Test func scalarsUseNSNumberDescriptions() {
        #expect(queryString(from: ["t": true, "f": false, "i": -3, "d": 1.5, "w": 2.0]) == "d=1.5&f=0&i=-3&t=1&w=2")
    }

    @Test func issueExample() {
        let parameters: Parameters = ["a": ["b": 1], "c": [1, 2], "d": .set(["x", "y"]), "e": .null]
        #expect(queryString(from: parameters) == "a%5Bb%5D=1&c%5B%5D=1&c%5B%5D=2&d=x&d=y&e")
    }

    @Test func emptyParametersGiveEmptyString() {
        #expect(queryString(from: [:]) == "")
        #expect(queryString(from: ["a": [], "b": [:]]) == "")
    }

    @Test func keysAndValuesAreEscaped() {
        #expect(queryString(from: ["a b": "c d/e?f", "ü": "%"]) == "a%20b=c%20d/e?f&%C3%BC=%25")
    }
}
