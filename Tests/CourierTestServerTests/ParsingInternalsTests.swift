import Testing

@testable import CourierTestServer

@Suite("Parsing internals: multipart, Range, percent-decoding")
struct ParsingInternalsTests {
    @Test("multipart: parts, headers, bare-LF part headers, missing final delimiter")
    func multipart() throws {
        let body = Array(
            "--X\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n1\r\n--X\nContent-Disposition: form-data; name=\"f\"; filename=\"x y.txt\"\nContent-Type: text/plain\n\nfile\r\n--X--".utf8
        )
        let parts = try #require(MultipartParser.parse(body, boundary: "X"))
        #expect(parts.count == 2)
        #expect(parts[0].name == "a")
        #expect(parts[0].filename == nil)
        #expect(parts[0].body == Array("1".utf8))
        #expect(parts[1].filename == "x y.txt")
        #expect(parts[1].contentType == "text/plain")
        #expect(parts[1].body == Array("file".utf8))
        #expect(MultipartParser.parse(Array("--X\r\n\r\nno end".utf8), boundary: "X") == nil)
        #expect(MultipartParser.parse(Array("nothing here".utf8), boundary: "X") == nil)
        #expect(MultipartParser.boundary(fromContentType: "multipart/form-data; charset=utf-8; boundary=\"a b\"") == "a b")
        #expect(MultipartParser.boundary(fromContentType: "multipart/form-data") == nil)
    }

    @Test("filename* (RFC 5987) is decoded")
    func extendedFilename() throws {
        let body = Array("--B\r\nContent-Disposition: form-data; name=\"f\"; filename*=UTF-8''%E2%9C%93.txt\r\n\r\nx\r\n--B--\r\n".utf8)
        let parts = try #require(MultipartParser.parse(body, boundary: "B"))
        #expect(parts.first?.filename == "✓.txt")
    }

    @Test(
        "Range resolution",
        arguments: [
            ("bytes=0-9", RangeRequests.Resolution.partial(.init(first: 0, last: 9))),
            ("bytes=5-", .partial(.init(first: 5, last: 99))),
            ("bytes=-10", .partial(.init(first: 90, last: 99))),
            ("bytes=-1000", .partial(.init(first: 0, last: 99))),
            ("bytes=100-", .unsatisfiable),
            ("bytes=-0", .unsatisfiable),
            ("bytes=9-5", .whole),
            ("bytes=0-1,5-6", .whole),
            ("items=0-1", .whole),
            ("bytes=a-b", .whole),
            ("bytes=99999999999999999999-", .unsatisfiable),
        ]
    )
    func rangeResolution(header: String, expected: RangeRequests.Resolution) {
        #expect(RangeRequests.resolve(header, size: 100) == expected)
    }

    @Test("percent-decoding keeps invalid escapes and never fails")
    func percentDecoding() {
        #expect(PercentDecoding.decode("a%20b+c", plusAsSpace: true) == "a b c")
        #expect(PercentDecoding.decode("a+b", plusAsSpace: false) == "a+b")
        #expect(PercentDecoding.decode("%zz%4", plusAsSpace: false) == "%zz%4")
        #expect(PercentDecoding.decode("%FF", plusAsSpace: false) == "\u{FFFD}")
        let pairs = PercentDecoding.formPairs("a=1&&b&c=%3D=")
        #expect(pairs.map(\.name) == ["a", "b", "c"])
        #expect(pairs.map(\.value) == ["1", "", "==" ])
    }
}
