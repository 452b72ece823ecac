@testable import Courier
import CourierTestServer
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NIOHTTP1
import Synchronization
import Testing

/// The built-in serializers read a completed task's response head (``SerializerInput``) instead
/// of an `HTTPURLResponse`: the values are Foundation's own, the results and errors are the same
/// as through the response, and an AFNetworking block GET whose blocks never read
/// `task.response` makes none.
@Suite("serializer input from the response head")
struct SerializerInputTests {
    private static let url = URL(string: "http://example.com/a/b.json")!

    struct Document: Decodable, Sendable {
        let b: String
    }

    private static func head(status: HTTPResponseStatus = .ok, fields: [(String, String)]) -> HTTPResponseHead {
        HTTPResponseHead(version: .http1_1, status: status, headers: HTTPHeaders(fields))
    }

    private static func input(_ head: HTTPResponseHead) -> SerializerInput {
        input(head, counting: ResponsesMade())
    }

    /// How often an input's `HTTPURLResponse` was made.
    private final class ResponsesMade: Sendable {
        let count = Atomic(0)
    }

    /// The input for `head`, counting in `made` each `HTTPURLResponse` it makes.
    private static func input(_ head: HTTPResponseHead, counting made: ResponsesMade) -> SerializerInput {
        SessionBridge.serializerInput(head) {
            made.count.add(1, ordering: .relaxed)
            return SessionBridge.makeResponse(head, url: url)
        }
    }

    /// Content-Type values the head reading repeats exactly.
    private static let readContentTypes: [String?] = [
        nil, "application/json", "Application/JSON", "application/json; charset=utf-8", "text/html;charset=ISO-8859-4",
        "text/plain ; charset = US-ASCII ", "text/plain; format=flowed; charset=utf-8; charset=latin1",
        "text/plain; Charset=utf-8", "text/plain; charset", "text/plain; charset=", "text/plain;", ";", "", " text/plain",
        "text/plain; x=1=2; charset=a=b", "image/png\t;\tcharset=\tUTF-16\t",
        // Hostile shapes: a list, empty parameters, an upper-case name, a huge charset, an unknown one.
        "TEXT/PLAIN", "text/plain, application/json", "text/plain; charset=utf-8, text/html; charset=latin1",
        "text/plain;;charset=x", "text/plain; CHARSET = UTF-8", "text/plain; charset=x-unknown-\u{7F}",
        "text/plain; charset=" + String(repeating: "u", count: 10_000),
        // Control characters and odd separators a server may send (review, 2026-11-25).
        "text/plain; charset='utf-8'", "text/plain;charset=utf-8;", "text/plain; =x; charset=y", "text/plain;\u{0B}charset=x",
        "text/plain; charset=\u{0C}utf-8", "text/plain;\u{0}charset=x", "text/plain\u{0}; charset=x",
        "text/plain; charset=utf-8\u{0}", "text/plain; charset=utf-8=x", "text/plain;charset\t=utf-8", "\t",
    ]

    @Test("status, MIME type and text encoding read from the head are the HTTPURLResponse's")
    func valuesMatchFoundation() throws {
        for contentType in Self.readContentTypes {
            let statuses: [HTTPResponseStatus] = [
                .ok, .notFound, .noContent, .custom(code: 299, reasonPhrase: "x"), .custom(code: 999, reasonPhrase: ""),
                .custom(code: 100, reasonPhrase: ""),
            ]
            for status in statuses {
                var fields = [("Server", "nginx"), ("Content-Length", "12"), ("x-trace", "1")]
                if let contentType { fields.insert(("Content-Type", contentType), at: 1) }
                let head = Self.head(status: status, fields: fields)
                let made = ResponsesMade()
                let input = Self.input(head, counting: made)
                let response = try #require(SessionBridge.makeResponse(head, url: Self.url))
                #expect(input.statusCode == response.statusCode)
                #expect(input.mimeType == response.mimeType, "\(contentType ?? "nil")")
                #expect(input.textEncodingName == response.textEncodingName, "\(contentType ?? "nil")")
                #expect(input.hasURL)
                // Read from the head: no HTTPURLResponse was made for it.
                #expect(made.count.load(ordering: .relaxed) == 0, "\(contentType ?? "nil")")
            }
        }
    }

    @Test("a quoted, escaped, non-ASCII or repeated Content-Type is read from the HTTPURLResponse, made for it")
    func unusualContentTypesFallBack() {
        let fallBacks: [[(String, String)]] = [
            [("Content-Type", "text/plain; charset=\"utf-8\"")],
            [("Content-Type", "text/pl\\ain")],
            [("Content-Type", "text/plain; charset=ütf")],
            [("content-type", "text/plain"), ("Content-Type", "application/json")],
            [("Content-Type", "text/plain"), ("Content-Type", "application/json")],
        ]
        for fields in fallBacks {
            let head = Self.head(fields: fields)
            #expect(ContentTypeReading.read(in: head.headers) == nil, "\(fields)")
            let made = ResponsesMade()
            let input = Self.input(head, counting: made)
            let response = SessionBridge.makeResponse(head, url: Self.url)
            #expect(input.mimeType == response?.mimeType, "\(fields)")
            #expect(input.textEncodingName == response?.textEncodingName, "\(fields)")
            #expect(made.count.load(ordering: .relaxed) == 2, "\(fields)")
        }
        // Another field that merely mentions the name is not a Content-Type.
        let mentioned = Self.head(fields: [("X-Content-Type", "a\"b"), ("Content-Type", "text/plain")])
        #expect(ContentTypeReading.read(in: mentioned.headers)?.mimeType == "text/plain")
    }

    /// Each built-in serializer's object and error through the head equal those through the
    /// `HTTPURLResponse`, for valid and invalid statuses, content types and bodies.
    @Test("every built-in serializer gives the same object and error from the head as from the response")
    func serializersAgree() throws {
        // One key per object: the descriptions compared below would otherwise depend on hashing order.
        let bodies: [Data?] = [
            nil, Data(), Data(" ".utf8), Data(#"{"b":"c"}"#.utf8), Data(#"[1,null,{"a":2.5}]"#.utf8), Data("not json".utf8),
            Data([0xff, 0xfe, 0x41]),
        ]
        let contentTypes: [String?] = [nil, "application/json", "text/json; charset=utf-8", "text/html", "application/x-plist", ""]
        let statuses: [HTTPResponseStatus] = [.ok, .noContent, .notFound, .internalServerError]
        for contentType in contentTypes {
            for status in statuses {
                for body in bodies {
                    var fields = [("Server", "test")]
                    if let contentType { fields.append(("Content-Type", contentType)) }
                    let head = Self.head(status: status, fields: fields)
                    let input = Self.input(head)
                    let response = try #require(SessionBridge.makeResponse(head, url: Self.url))
                    let context = "\(status.code) \(contentType ?? "nil") \(body.map { String(decoding: $0, as: UTF8.self) } ?? "nil")"
                    try agree(HTTPResponseSerializer(), input, response, body, context)
                    try agree(JSONResponseSerializer(), input, response, body, context)
                    try agree(StringResponseSerializer(), input, response, body, context)
                    try agree(DecodableResponseSerializer<Document>(), input, response, body, context)
                    try agree(PropertyListResponseSerializer(), input, response, body, context)
                }
            }
        }
    }

    /// An error's description without Foundation's `UserInfo={…}` dumps, whose key order
    /// changes from run to run (a nested NSError's dictionary is printed in hash order).
    private static func stable(_ error: (any Error)?) -> String {
        guard let error else { return "nil" }
        let text = String(describing: error)
        guard let range = text.range(of: "UserInfo=") else { return text }
        return String(text[..<range.lowerBound])
    }

    private func agree<S: InputSerializing>(
        _ serializer: S, _ input: SerializerInput, _ response: HTTPURLResponse, _ body: Data?, _ context: String
    ) throws {
        let fromHead = serializer.serialize(input, data: body)
        let fromResponse = serializer.serializeResponse(response, data: body)
        #expect(String(describing: fromHead.object) == String(describing: fromResponse.object), "\(S.self) \(context)")
        #expect(Self.stable(fromHead.error) == Self.stable(fromResponse.error), "\(S.self) \(context)")
        #expect(fromHead.error?.response?.statusCode == fromResponse.error?.response?.statusCode, "\(S.self) \(context)")
    }

    // MARK: - Through the session

    private func built(_ task: SessionTask?) -> Int? { task?.snapshot.withLock { $0.responsesBuilt } }

    /// One block-API GET: the task, what the success or failure block saw, and `readsResponse`
    /// decides whether the block reads `task.response`.
    private func blockGET(_ manager: HTTPSessionManager, _ path: String, readsResponse: Bool) async
        -> (task: DataTask?, object: (any Sendable)?, error: (any Error)?, seen: HTTPURLResponse?)
    {
        let seen = ResponseBox()
        let recorder = CompletionRecorder()
        let task = manager.get(
            path,
            success: { task, object in
                if readsResponse, let response = task.response { seen.set(response) }
                recorder.handler(nil, object, nil)
            },
            failure: { task, error in
                if readsResponse, let response = task?.response { seen.set(response) }
                recorder.handler(nil, nil, error)
            })
        await recorder.wait()
        return (task, recorder.first?.object, recorder.first?.error, seen.get())
    }

    @Test("a JSON GET through the block API whose blocks don't read task.response makes no HTTPURLResponse")
    func blockGETMakesNoResponse() async throws {
        try await TestServer.withRunning { server in
            let manager = HTTPSessionManager(baseURL: server.baseURL)
            let (task, object, error, _) = await blockGET(manager, "json", readsResponse: false)
            #expect(error == nil)
            #expect((object as? JSONValue)?["slideshow"] != nil)
            #expect(built(task) == 0)
            // Read afterwards, it is made then, once, with the eager path's values.
            let response = try #require(task?.response)
            #expect(response.statusCode == 200)
            #expect(response.mimeType == "application/json")
            #expect(built(task) == 1)
        }
    }

    @Test("a block that reads task.response gets it made once, with the eager path's values")
    func blockGETReadingTheResponse() async throws {
        try await TestServer.withRunning { server in
            let manager = HTTPSessionManager(baseURL: server.baseURL)
            let (task, object, error, seen) = await blockGET(manager, "json", readsResponse: true)
            #expect(error == nil)
            #expect(object as? JSONValue != nil)
            let response = try #require(seen)
            #expect(task?.response === response)
            #expect(built(task) == 1)
            let (head, url) = try #require(task?.snapshot.withLock { ($0.head, $0.responseURL) })
            let finalHead = try #require(head)
            let finalURL = try #require(url)
            let eager = try #require(SessionBridge.makeResponse(finalHead, url: finalURL))
            #expect(response.statusCode == eager.statusCode)
            #expect(response.url == eager.url)
            #expect(response.mimeType == eager.mimeType)
            #expect(response.textEncodingName == eager.textEncodingName)
            #expect(response.expectedContentLength == eager.expectedContentLength)
            #expect(response.allHeaderFields as? [String: String] == eager.allHeaderFields as? [String: String])
            #expect(built(task) == 1)
        }
    }

    @Test("an unacceptable status or content type still fails with the same CourierError, carrying the task's response")
    func unacceptableResponsesStillFail() async throws {
        try await TestServer.withRunning { server in
            let manager = HTTPSessionManager(baseURL: server.baseURL)
            let (notFoundTask, _, notFound, _) = await blockGET(manager, "status/404", readsResponse: false)
            guard case .unacceptableStatusCode(let response, _, _)? = notFound as? CourierError else {
                Issue.record("expected unacceptableStatusCode, got \(String(describing: notFound))")
                return
            }
            #expect(response.statusCode == 404)
            #expect(notFoundTask?.response === response)
            #expect(built(notFoundTask) == 1)

            let (htmlTask, _, html, _) = await blockGET(manager, "html", readsResponse: false)
            guard case .unacceptableContentType(let mimeType, let htmlResponse, let data)? = html as? CourierError else {
                Issue.record("expected unacceptableContentType, got \(String(describing: html))")
                return
            }
            #expect(mimeType == "text/html")
            #expect(htmlResponse.statusCode == 200)
            #expect((data?.count ?? 0) > 0)
            #expect(htmlTask?.response === htmlResponse)
            #expect(built(htmlTask) == 1)
            // The same error the response path gives.
            let expected = JSONResponseSerializer().serializeResponse(htmlResponse, data: data).error
            #expect(String(describing: html) == String(describing: expected))
        }
    }

    @Test("a multipart POST through the block API whose blocks don't read task.response makes no HTTPURLResponse")
    func blockMultipartMakesNoResponse() async throws {
        try await TestServer.withRunning { server in
            let manager = HTTPSessionManager(baseURL: server.baseURL)
            let recorder = CompletionRecorder()
            let task = manager.post(
                "post", parameters: ["a": "1"], headers: nil,
                constructingBody: { form in
                    form.appendPart(fileData: Data("hello".utf8), name: "file", fileName: "a.txt", mimeType: "text/plain")
                },
                progress: nil,
                success: recorder.success(), failure: recorder.failure())
            await recorder.wait()
            #expect(recorder.first?.error == nil)
            #expect((recorder.first?.object as? JSONValue)?["files"] != nil)
            #expect(built(task) == 0)
            #expect(task?.response?.statusCode == 200)
            #expect(built(task) == 1)
        }
    }

    @Test("a typed call with a built-in serializer reads the head: same values, same errors")
    func typedSerializerCall() async throws {
        try await TestServer.withRunning { server in
            let manager = HTTPSessionManager(baseURL: server.baseURL)
            let json = try await manager.get("json", serializer: JSONResponseSerializer())
            #expect(json.status == .ok)
            #expect(json.value?["slideshow"] != nil)
            let text = try await manager.get("encoding/utf8", serializer: StringResponseSerializer())
            #expect(text.value.contains("‾‾‾"))
            let raw = try await manager.get("bytes/16", serializer: HTTPResponseSerializer())
            #expect(raw.value?.count == 16)
            do {
                _ = try await manager.get("status/404", serializer: JSONResponseSerializer())
                Issue.record("a 404 was accepted")
            } catch let CourierError.unacceptableStatusCode(response, _, _) {
                #expect(response.statusCode == 404)
            }
            do {
                _ = try await manager.get("html", serializer: JSONResponseSerializer())
                Issue.record("text/html was accepted")
            } catch let CourierError.unacceptableContentType(mimeType, response, _) {
                #expect(mimeType == "text/html")
                #expect(response.mimeType == "text/html")
            }
        }
    }
}
