import CourierTestServer
import Foundation
import Testing

@Suite("multipart/form-data bodies become form and files")
struct MultipartFormTests {
    static func body(boundary: String, parts: [(headers: [String], content: [UInt8])]) -> [UInt8] {
        var body: [UInt8] = []
        for part in parts {
            body += Array("--\(boundary)\r\n".utf8)
            for header in part.headers {
                body += Array("\(header)\r\n".utf8)
            }
            body += Array("\r\n".utf8)
            body += part.content
            body += Array("\r\n".utf8)
        }
        body += Array("--\(boundary)--\r\n".utf8)
        return body
    }

    @Test("fields, a text file, a binary file and repeated names, like httpbin")
    func fieldsAndFiles() async throws {
        let boundary = "----CourierBoundary7MA4YWxkTrZu0gW"
        let binary: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x00, 0xFF]
        let body = Self.body(
            boundary: boundary,
            parts: [
                (["Content-Disposition: form-data; name=\"title\""], Array("Hello, multipart".utf8)),
                (["Content-Disposition: form-data; name=\"tag\""], Array("a".utf8)),
                (["Content-Disposition: form-data; name=\"tag\""], Array("b".utf8)),
                (
                    ["Content-Disposition: form-data; name=\"notes\"; filename=\"notes.txt\"", "Content-Type: text/plain"],
                    Array("line one\r\n--not a boundary\r\nline three".utf8)
                ),
                (["Content-Disposition: form-data; name=\"image\"; filename=\"x.png\"", "Content-Type: image/png"], binary),
                (["Content-Disposition: form-data; name=\"empty\"; filename=\"\""], []),
            ]
        )
        try await TestServer.withRunning { server in
            let response = try await server.request(
                "/post",
                method: "POST",
                headers: [("Content-Type", "multipart/form-data; boundary=\(boundary)")],
                body: body
            )
            #expect(response.status == 200)
            let form = try #require(response.object("form"))
            #expect(form["title"] as? String == "Hello, multipart")
            #expect(form["tag"] as? [String] == ["a", "b"])
            let files = try #require(response.object("files"))
            #expect(files["notes"] as? String == "line one\r\n--not a boundary\r\nline three")
            #expect(files["image"] as? String == "data:image/png;base64,\(Data(binary).base64EncodedString())")
            #expect(files["empty"] as? String == "")
            #expect(response.string("data") == "")
            #expect(response.json?["json"] is NSNull)
        }
    }

    @Test("a quoted boundary, a preamble and an epilogue are handled")
    func quotedBoundaryAndPreamble() async throws {
        let boundary = "b\u{20}oundary:x"
        var body = Array("This is the preamble.\r\n".utf8)
        body += Self.body(boundary: boundary, parts: [(["Content-Disposition: form-data; name=\"k\""], Array("v".utf8))])
        body += Array("epilogue".utf8)
        try await TestServer.withRunning { server in
            let response = try await server.request(
                "/anything",
                method: "PUT",
                headers: [("Content-Type", "multipart/form-data; boundary=\"\(boundary)\"")],
                body: body
            )
            #expect(response.object("form")?["k"] as? String == "v")
        }
    }

    @Test("a body without its closing delimiter yields an empty form")
    func truncated() async throws {
        let body = Array("--xyz\r\nContent-Disposition: form-data; name=\"k\"\r\n\r\nvalue".utf8)
        try await TestServer.withRunning { server in
            let response = try await server.request(
                "/post",
                method: "POST",
                headers: [("Content-Type", "multipart/form-data; boundary=xyz")],
                body: body
            )
            #expect(response.status == 200)
            #expect(response.object("form")?.isEmpty == true)
        }
    }
}
