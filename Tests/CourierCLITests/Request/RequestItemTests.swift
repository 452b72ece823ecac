import Foundation
import Testing

@testable import courier

/// The item syntax, parsed without I/O.
@Suite("RequestItem")
struct RequestItemTests {
    @Test("each separator gives its kind of item")
    func separators() throws {
        #expect(try RequestItem.parse("q==a b") == .query(name: "q", value: "a b"))
        #expect(try RequestItem.parse("name=courier") == .dataField(name: "name", value: "courier"))
        #expect(try RequestItem.parse("n:=42") == .rawJSONField(name: "n", json: "42"))
        #expect(try RequestItem.parse("X-Api:secret") == .header(name: "X-Api", value: "secret"))
        #expect(try RequestItem.parse("User-Agent:") == .header(name: "User-Agent", value: nil))
        #expect(try RequestItem.parse("X-Empty;") == .emptyHeader(name: "X-Empty"))
        #expect(try RequestItem.parse("photo@/tmp/a.png") == .fileField(name: "photo", path: "/tmp/a.png"))
        #expect(try RequestItem.parse("@body.json") == .bodyFile(path: "body.json"))
        #expect(try RequestItem.parse("bio=@bio.txt") == .dataFieldFromFile(name: "bio", path: "bio.txt"))
        #expect(try RequestItem.parse("cfg:=@cfg.json") == .rawJSONFieldFromFile(name: "cfg", path: "cfg.json"))
    }

    @Test("the leftmost separator wins; values are taken verbatim")
    func leftmostSeparator() throws {
        #expect(try RequestItem.parse("url=http://x/?a==b") == .dataField(name: "url", value: "http://x/?a==b"))
        #expect(try RequestItem.parse("Accept:a=b") == .header(name: "Accept", value: "a=b"))
        #expect(try RequestItem.parse("list:=[1,2]") == .rawJSONField(name: "list", json: "[1,2]"))
        #expect(try RequestItem.parse("path=C:\\dir") == .dataField(name: "path", value: "C:\\dir"))
    }

    @Test("a backslash escapes a separator in the name")
    func escapes() throws {
        #expect(try RequestItem.parse("a\\=b==c") == .query(name: "a=b", value: "c"))
        #expect(try RequestItem.parse("key\\:x=1") == .dataField(name: "key:x", value: "1"))
        #expect(try RequestItem.parse("mail\\@host=1") == .dataField(name: "mail@host", value: "1"))
    }

    @Test("items without a separator or a name are refused with a reason")
    func errors() {
        #expect(throws: RequestItem.ParseError.self) { try RequestItem.parse("plain") }
        #expect(throws: RequestItem.ParseError.self) { try RequestItem.parse("=value") }
        #expect(throws: RequestItem.ParseError.self) { try RequestItem.parse("file@") }
        #expect(throws: RequestItem.ParseError.self) { try RequestItem.parse("X-A;b") }
    }

    @Test("the method is optional: GET, or POST when data items are present")
    func methodInference() throws {
        let get = try RequestArguments.parse([":8080/get", "a==1", "X:1"])
        #expect(get.method == nil && get.effectiveMethod == "GET" && get.url == "http://localhost:8080/get")
        let post = try RequestArguments.parse(["example.org/post", "a=1"])
        #expect(post.effectiveMethod == "POST" && post.url == "http://example.org/post")
        let put = try RequestArguments.parse(["put", "https://example.org/x", "a=1"])
        #expect(put.method == "PUT" && put.url == "https://example.org/x")
        let bare = try RequestArguments.parse(["localhost"])
        #expect(bare.method == nil && bare.url == "http://localhost")
        #expect(throws: RequestArguments.UsageError.self) { try RequestArguments.parse([]) }
    }

    @Test("JSON is re-indented in the server's key order, numbers untouched")
    func jsonFormatting() throws {
        let text = #"{"z":1.50,"a":[true,null,{}],"s":"x\"}y","e":[]}"#
        let formatted = JSONFormatter.format(Data(text.utf8), indent: 2, colors: false)
        #expect(formatted == """
            {
              "z": 1.50,
              "a": [
                true,
                null,
                {}
              ],
              "s": "x\\"}y",
              "e": []
            }
            """)
        #expect(JSONFormatter.format(Data("not json".utf8), colors: false) == nil)
    }
}
