import Courier
import CourierTestServer
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HTTPTypes
import Testing

/// The async tour shown in README.md and in the "Async and Typed Responses" article, compiled
/// and run against the test server (`DocumentationExamplesTests` checks the blocks appear here).
@Suite("README async/await")
struct AsyncReadmeTests {
    struct Slideshow: Decodable, Sendable {
        struct Inner: Decodable, Sendable { let title: String }
        let slideshow: Inner
    }

    @Test("the README's Async/await example")
    func readmeAsyncExamples() async throws {
        try await TestServer.withRunning { server in
            try Data(repeating: 0x41, count: 1 << 20).write(to: URL(fileURLWithPath: "/tmp/upload.bin"))
            defer {
                try? FileManager.default.removeItem(atPath: "/tmp/upload.bin")
                try? FileManager.default.removeItem(atPath: "/tmp/range.bin")
            }
            // Example begins
            struct Item: Codable, Sendable { let name: String; let tags: [String] }
            struct Echo: Decodable, Sendable { let data: String; let method: String }
            struct Received: Decodable, Sendable { let bytes: Int; let sha256: String }

            let manager = HTTPSessionManager(baseURL: server.baseURL)

            // Typed results for every verb (get, head, post, put, patch, delete, request(method, ...)).
            let slideshow = try await manager.get("json", as: Slideshow.self)
            print(slideshow.status, slideshow.value.slideshow.title)
            let head = try await manager.head("get")                    // status checked, no body
            print(head.headerFields[.contentLength] ?? "-")

            // An Encodable body: the encoder's bytes as they are (its key order, top-level arrays).
            let encoder = JSONEncoder()
            encoder.outputFormatting = .sortedKeys
            let echo = try await manager.post("anything", body: [Item(name: "a", tags: ["x"])], encoder: encoder, as: Echo.self)
            print(echo.value.data)                                       // [{"name":"a","tags":["x"]}]

            // A serializer for this call only: the manager's responseSerializer is left alone.
            let page = try await manager.get("html", serializer: StringResponseSerializer())
            print(page.value.prefix(15))

            // Uploads (Data, a file, an AsyncSequence of chunks or bytes, a multipart form) and downloads
            // return a handle: progress as async sequences, the result to await.
            let file = URL(fileURLWithPath: "/tmp/upload.bin")
            let upload = try manager.upload(fileAt: file, to: "upload")
            let progress = Task { for await step in upload.uploadProgress { print(Int(step.fractionCompleted * 100), "%") } }
            print(try await upload.decoded(as: Received.self).value.bytes)
            await progress.value                                         // ends at 100 %

            let (chunks, feed) = AsyncStream<Data>.makeStream()
            let streamed = try manager.upload(chunks, to: "upload")      // chunked, with backpressure
            feed.yield(Data("hello ".utf8)); feed.yield(Data("world".utf8)); feed.finish()
            print(try await streamed.decoded(as: Received.self).value.bytes)   // 11

            let form = try manager.uploadMultipart(to: "post", parameters: ["title": "cat"]) { form in
                try form.appendPart(fileURL: file, name: "attachment")
            }
            _ = try await form.response

            let target = URL(fileURLWithPath: "/tmp/range.bin")
            let download = try manager.download("range/102400?duration=2&chunk_size=1024", to: target)
            for await step in download.downloadProgress where step.completedUnitCount > 10_000 { break }
            if let resumeData = await download.cancelProducingResumeData() {   // keeps the bytes so far
                let done = try await manager.download(resumingWith: resumeData, to: target).response
                print(done.status, done.value.path)                      // 206 Partial Content /tmp/range.bin
            }

            // Streaming bodies: the head first, then chunks, lines or server-sent events, with
            // backpressure; leaving the loop early cancels the request.
            let lines = try await manager.stream("stream/3")
            print(lines.status)
            for try await line in lines.body.lines { print(line) }
            // Example ends

            // And what the comments claim.
            #expect(head.status == .ok)
            #expect(echo.value.data == #"[{"name":"a","tags":["x"]}]"#)
            #expect(page.value.contains("<html"))
            #expect(try await upload.decoded(as: Received.self).value.bytes == 1 << 20)
            #expect(try await streamed.decoded(as: Received.self).value.bytes == 11)
            #expect(try await form.response.status == .ok)
            #expect(try Data(contentsOf: target) == DownloadResumeTests.rangeBytes(102_400))
            #expect(manager.responseSerializer is JSONResponseSerializer)
        }
    }
}
