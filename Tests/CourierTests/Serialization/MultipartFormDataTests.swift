import CourierTestServer
import Foundation
import NIOCore
import Synchronization
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@Suite struct MultipartFormDataTests {
    static func body(of form: MultipartFormData) async throws -> Data {
        var collected = Data()
        try await form.writeBody { collected.append($0) }
        return collected
    }

    static func temporaryFile(_ contents: Data, name: String = "photo.png") throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let url = directory.appendingPathComponent(name)
        try contents.write(to: url)
        return url
    }

    @Test func boundaryShape() {
        let boundary = MultipartFormData.makeBoundary()
        #expect(boundary.hasPrefix("Boundary+"))
        let hex = boundary.dropFirst("Boundary+".count)
        #expect(hex.count == 16)
        #expect(hex.allSatisfy { "0123456789ABCDEF".contains($0) })
        #expect(MultipartFormData.makeBoundary() != boundary)
    }

    @Test func exactFramingOfASmallForm() async throws {
        let form = MultipartFormData(boundary: "Boundary+0123456789ABCDEF")
        form.appendPart(formData: Data("value".utf8), name: "field")
        form.appendPart(fileData: Data("PNGDATA".utf8), name: "file", fileName: "a.png", mimeType: "image/png")
        form.appendPart(headers: [(name: "X-A", value: "1"), (name: "Content-Disposition", value: "form-data; name=\"h\"")], body: Data("!".utf8))
        let expected = """
            --Boundary+0123456789ABCDEF\r
            Content-Disposition: form-data; name="field"\r
            \r
            value\r
            --Boundary+0123456789ABCDEF\r
            Content-Disposition: form-data; name="file"; filename="a.png"\r
            Content-Type: image/png\r
            \r
            PNGDATA\r
            --Boundary+0123456789ABCDEF\r
            X-A: 1\r
            Content-Disposition: form-data; name="h"\r
            \r
            !\r
            --Boundary+0123456789ABCDEF--\r

            """
        let body = try await Self.body(of: form)
        #expect(String(decoding: body, as: UTF8.self) == expected)
        #expect(form.contentLength == Int64(body.count))
        #expect(form.contentType == "multipart/form-data; boundary=Boundary+0123456789ABCDEF")
    }

    /// `writeBody(intoBuffers:)` (what `makeRequestBody()` sends; file parts read straight into
    /// the buffers) gives the bytes and packets `writeBody(into:)` gives, throttled or not.
    @Test func bufferChunksMatchDataChunks() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("mp-buffers-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("big.bin")
        let fileBytes = Data((0..<(200 * 1024 + 17)).map { UInt8(truncatingIfNeeded: $0 % 251) })
        try fileBytes.write(to: file)
        for packet in [0, 1000] {
            let form = MultipartFormData(boundary: "Boundary+0123456789ABCDEF")
            try form.appendPart(fileURL: file, name: "file", fileName: "big.bin", mimeType: "application/octet-stream")
            form.appendPart(formData: Data("value".utf8), name: "field")
            if packet > 0 { form.throttleBandwidth(packetSize: packet, delay: 0) }
            var dataChunks: [Data] = []
            try await form.writeBody(into: { dataChunks.append(Data($0)) })
            var bufferChunks: [Data] = []
            try await form.writeBody(intoBuffers: { bufferChunks.append(Data($0.readableBytesView)) })
            #expect(bufferChunks == dataChunks)
            #expect(Int64(bufferChunks.reduce(0) { $0 + $1.count }) == form.contentLength)
            #expect(bufferChunks.allSatisfy { $0.count <= (packet > 0 ? packet : MultipartFormData.chunkSize) })
        }
    }

    @Test func filePartsTakeNameAndTypeFromTheURL() async throws {
        let url = try Self.temporaryFile(Data(repeating: 7, count: 200_000), name: "photo.JPG")
        let form = MultipartFormData(boundary: "B")
        try form.appendPart(fileURL: url, name: "upload")
        let body = try await Self.body(of: form)
        let head = "--B\r\nContent-Disposition: form-data; name=\"upload\"; filename=\"photo.JPG\"\r\nContent-Type: image/jpeg\r\n\r\n"
        #expect(body.prefix(head.utf8.count) == Data(head.utf8))
        #expect(body.count == head.utf8.count + 200_000 + "\r\n--B--\r\n".utf8.count)
        #expect(form.contentLength == Int64(body.count))
        #expect(MIMETypes.mimeType(forPathExtension: "weird") == "application/octet-stream")
    }

    @Test func fileErrorsAreTypedWithThePath() throws {
        let form = MultipartFormData()
        let missing = URL(fileURLWithPath: "/nonexistent/courier/file.txt")
        #expect {
            try form.appendPart(fileURL: missing, name: "f")
        } throws: { error in
            guard case .requestSerializationFailed(.fileNotFound(let path)) = error as? CourierError else { return false }
            return path == "/nonexistent/courier/file.txt" && "\(error)".contains(path)
        }
        #expect {
            try form.appendPart(fileURL: FileManager.default.temporaryDirectory, name: "f")
        } throws: { error in
            guard case .requestSerializationFailed(.notARegularFile) = error as? CourierError else { return false }
            return true
        }
        #expect {
            try form.appendPart(fileURL: URL(string: "http://h/x.txt")!, name: "f")
        } throws: { error in
            guard case .requestSerializationFailed(.notAFileURL) = error as? CourierError else { return false }
            return true
        }
        #expect(form.isEmpty)
    }

    @Test(.enabled(if: getuid() != 0, "root can read any file"))
    func unreadableFileIsTyped() throws {
        let url = try Self.temporaryFile(Data("x".utf8), name: "secret.txt")
        try FileManager.default.setAttributes([.posixPermissions: 0o000], ofItemAtPath: url.path)
        #expect(throws: CourierError.self) { try MultipartFormData().appendPart(fileURL: url, name: "f") }
    }

    @Test func streamAndSequenceParts() async throws {
        let form = MultipartFormData(boundary: "B")
        form.appendPart(inputStream: InputStream(data: Data("stream!".utf8)), name: "s", fileName: "s.bin", length: 7, mimeType: "application/octet-stream")
        let chunks = AsyncStream<Data> { continuation in
            continuation.yield(Data("ab".utf8))
            continuation.yield(Data("cd".utf8))
            continuation.finish()
        }
        form.appendPart(chunks: chunks, name: "q", fileName: "q.txt", length: 4, mimeType: "text/plain")
        #expect(!form.isReplayable)
        let body = String(decoding: try await Self.body(of: form), as: UTF8.self)
        #expect(body.contains("\r\n\r\nstream!\r\n--B\r\n"))
        #expect(body.contains("\r\n\r\nabcd\r\n--B--\r\n"))
        #expect(form.contentLength == Int64(body.utf8.count))
    }

    @Test func declaredLengthMismatchFails() async {
        let short = MultipartFormData()
        short.appendPart(inputStream: InputStream(data: Data("abc".utf8)), name: "s", fileName: "s", length: 5, mimeType: "x/y")
        await #expect(throws: CourierError.self) { try await Self.body(of: short) }
        let long = MultipartFormData()
        long.appendPart(inputStream: InputStream(data: Data("abcdef".utf8)), name: "s", fileName: "s", length: 2, mimeType: "x/y")
        await #expect(throws: CourierError.self) { try await Self.body(of: long) }
    }

    @Test func throttlingSplitsIntoPackets() async throws {
        let form = MultipartFormData(boundary: "B")
        form.appendPart(fileData: Data(repeating: 1, count: 10_000), name: "f", fileName: "f", mimeType: "x/y")
        form.throttleBandwidth(packetSize: 4_096, delay: 0.001)
        var sizes: [Int] = []
        try await form.writeBody { sizes.append($0.count) }
        #expect(sizes.allSatisfy { $0 <= 4_096 })
        #expect(sizes.reduce(0, +) == Int(form.contentLength))
        #expect(MultipartFormData.suggestedPacketSize == 16_384)
        #expect(MultipartFormData.suggestedDelay == 0.2)
    }

    /// A throttle delay is the caller's number: an infinite one pauses (until the writer is
    /// cancelled) instead of trapping when converted to nanoseconds.
    @Test func anInfiniteThrottleDelayPausesUntilCancelled() async throws {
        let form = MultipartFormData(boundary: "B")
        form.appendPart(fileData: Data(repeating: 1, count: 10_000), name: "f", fileName: "f", mimeType: "x/y")
        form.throttleBandwidth(packetSize: 4_096, delay: .infinity)
        let writer = Task { try await form.writeBody { (_: Data) in } }
        try await Task.sleep(for: .milliseconds(100))
        writer.cancel()
        await #expect(throws: CancellationError.self) { try await writer.value }
    }

    /// A declared part length is the caller's number: a negative one, or lengths whose sum with
    /// the framing passes Int64.max, make the form request fail with a typed error naming the
    /// problem (a negative Content-Length was sent, or the sum trapped), and ``contentLength``
    /// says -1 instead of trapping.
    @Test(arguments: [[-1], [Int64.min], [Int64.max], [Int64.max / 2, Int64.max / 2], [5, -6]] as [[Int64]])
    func hostileDeclaredLengthsAreATypedError(lengths: [Int64]) throws {
        let serializer = HTTPRequestSerializer()
        var built: MultipartFormData?
        do {
            _ = try serializer.multipartFormRequest(method: "POST", urlString: "http://h/") { form in
                built = form
                for length in lengths {
                    form.appendPart(
                        inputStream: InputStream(data: Data()), name: "s", fileName: "s", length: length, mimeType: "x/y")
                }
            }
            Issue.record("lengths \(lengths): no error")
        } catch CourierError.requestSerializationFailed(.bodyStreamFailed(let reason)) {
            let expected =
                lengths.contains { $0 < 0 }
                ? "part \(try #require(lengths.firstIndex { $0 < 0 })) declares a negative length"
                : "the declared lengths add up to more than \(Int64.max) bytes"
            #expect(reason.hasPrefix(expected), "\(reason)")
        }
        #expect(built?.contentLength == -1)
        // Read as an InputStream (`makeInputStream`), parts that yield bytes: the read fails,
        // never traps (Int64.min minus the bytes read overflowed).
        let form = MultipartFormData(boundary: "B")
        for length in lengths {
            form.appendPart(
                inputStream: InputStream(data: Data("xyz".utf8)), name: "s", fileName: "s", length: length, mimeType: "x/y")
        }
        let stream = form.makeInputStream()
        stream.open()
        var buffer = [UInt8](repeating: 0, count: 64)
        var read = 1
        while read > 0 { read = stream.read(&buffer, maxLength: buffer.count) }
        #expect(read == -1, "lengths \(lengths)")
        stream.close()
    }

    /// A field name or file name is often not the caller's own (a parameter key from input, a
    /// file's name on disk, which may hold `"` and newlines on Linux): it can't close its quotes
    /// or start a header or a part of its own. Escaped as browsers do (WHATWG's multipart
    /// form-data encoding: `"` %22, CR %0D, LF %0A).
    @Test func namesCantBreakOutOfTheirQuotes() async throws {
        let form = MultipartFormData(boundary: "B")
        form.appendPart(formData: Data("v".utf8), name: "a\"; name=\"admin\r\nX-Evil: 1")
        form.appendPart(fileData: Data("f".utf8), name: "f\n", fileName: "x.txt\"\r\n\r\n--B--\r\n", mimeType: "text/plain")
        let text = try #require(String(data: try await Self.body(of: form), encoding: .utf8))
        let expected =
            "--B\r\nContent-Disposition: form-data; name=\"a%22; name=%22admin%0D%0AX-Evil: 1\"\r\n\r\nv"
            + "\r\n--B\r\nContent-Disposition: form-data; name=\"f%0A\"; filename=\"x.txt%22%0D%0A%0D%0A--B--%0D%0A\"\r\n"
            + "Content-Type: text/plain\r\n\r\nf\r\n--B--\r\n"
        #expect(text == expected)
        #expect(form.contentLength == Int64(text.utf8.count))
    }

    @Test func serializerFlattensParametersAndSetsHeaders() async throws {
        let serializer = HTTPRequestSerializer()
        let request = try serializer.multipartFormRequest(
            method: "POST", urlString: "http://h/upload",
            parameters: ["b": ["x": 1, "y": true], "a": ["p", "q"], "n": .null]
        ) { form in
            form.appendPart(fileData: Data("1".utf8), name: "file", fileName: "f.txt", mimeType: "text/plain")
        }
        let form = try #require(request.formData)
        #expect(request.urlRequest.value(forHTTPHeaderField: "Content-Type") == form.contentType)
        #expect(request.urlRequest.value(forHTTPHeaderField: "Content-Length") == String(form.contentLength))
        #expect(request.urlRequest.httpBody == nil)
        #expect(request.urlRequest.value(forHTTPHeaderField: "User-Agent") == DefaultHeaders.processUserAgent)
        #expect(request.urlRequest.value(forHTTPHeaderField: "Accept-Language") == DefaultHeaders.processAcceptLanguage)
        let body = String(decoding: try await Self.body(of: form), as: UTF8.self)
        let names = body.components(separatedBy: "form-data; name=\"").dropFirst().map { $0.prefix { $0 != "\"" } }
        #expect(names == ["a[]", "a[]", "b[x]", "b[y]", "n", "file"])
        #expect(body.contains("name=\"b[y]\"\r\n\r\n1\r\n"))
        #expect(body.contains("name=\"n\"\r\n\r\n\r\n"))
    }

    @Test func getAndHeadAreRefused() {
        for method in ["GET", "head"] {
            #expect {
                try HTTPRequestSerializer().multipartFormRequest(method: method, urlString: "http://h/")
            } throws: { error in
                guard case .requestSerializationFailed(.multipartMethodNotAllowed) = error as? CourierError else { return false }
                return true
            }
        }
    }

    @Test func noPartsMeansNoBody() throws {
        let request = try JSONRequestSerializer().multipartFormRequest(method: "PUT", urlString: "http://h/")
        #expect(request.formData == nil)
        #expect(request.makeRequestBody() == nil)
        #expect(request.urlRequest.httpBody == nil)
        #expect(request.urlRequest.value(forHTTPHeaderField: "Content-Type") == nil)
        #expect(request.urlRequest.value(forHTTPHeaderField: "Content-Length") == nil)
    }

    @Test func writingStreamContentsToFile() async throws {
        let serializer = HTTPRequestSerializer()
        let source = try Self.temporaryFile(Data(repeating: 42, count: 70_000), name: "data.bin")
        let request = try serializer.multipartFormRequest(method: "POST", urlString: "http://h/", parameters: ["k": "v"]) { form in
            try form.appendPart(fileURL: source, name: "f")
        }
        let target = source.deletingLastPathComponent().appendingPathComponent("body.multipart")
        let fileRequest = try await serializer.requestWithMultipartFormRequest(request, writingStreamContentsToFile: target)
        let written = try Data(contentsOf: target)
        #expect(written == (try await Self.body(of: try #require(request.formData))))
        #expect(fileRequest.value(forHTTPHeaderField: "Content-Length") == String(written.count))
        #expect(fileRequest.httpBodyStream == nil)
    }

    /// `form`'s body as one of its three producers makes it (`data`: `writeBody(into:)`,
    /// `buffers`: `writeBody(intoBuffers:)`, else the input stream), and the error it ended with:
    /// for the stream, its `streamError`, or a `bodyStreamFailed` with no reason when it stopped
    /// short without one.
    static func produce(_ form: MultipartFormData, with producer: String) async -> (body: Data, error: (any Error)?) {
        var body = Data()
        do {
            switch producer {
            case "data": try await form.writeBody(into: { (chunk: Data) in body.append(chunk) })
            case "buffers": try await form.writeBody(intoBuffers: { body.append(contentsOf: $0.readableBytesView) })
            default:
                let stream = form.makeInputStream()
                let (collected, _, finished) = Self.drain(stream)
                return (collected, finished ? nil : stream.streamError ?? CourierError.requestSerializationFailed(.bodyStreamFailed("")))
            }
        } catch {
            return (body, error)
        }
        return (body, nil)
    }

    static func drain(_ stream: InputStream, bufferSize: Int = 1_000) -> (Data, [Int], Bool) {
        stream.open()
        defer { stream.close() }
        var collected = Data()
        var sizes: [Int] = []
        var buffer = [UInt8](repeating: 0, count: bufferSize)
        while true {
            let count = stream.read(&buffer, maxLength: bufferSize)
            if count < 0 { return (collected, sizes, false) }
            if count == 0 { return (collected, sizes, true) }
            sizes.append(count)
            collected.append(contentsOf: buffer[0..<count])
        }
    }

    @Test func inputStreamMatchesTheStreamedBody() async throws {
        let url = try Self.temporaryFile(Data((0..<50_000).map { UInt8(truncatingIfNeeded: $0) }), name: "f.bin")
        func makeForm() throws -> MultipartFormData {
            let form = MultipartFormData(boundary: "Boundary+ABCDEF0123456789")
            form.appendPart(formData: Data("v".utf8), name: "k")
            try form.appendPart(fileURL: url, name: "file")
            form.appendPart(fileData: Data(repeating: 9, count: 3_333), name: "d", fileName: "d.bin", mimeType: "x/y")
            return form
        }
        let form = try makeForm()
        let expected = try await Self.body(of: form)
        let (streamed, sizes, finished) = Self.drain(form.makeInputStream())
        #expect(finished)
        #expect(streamed == expected)
        #expect(sizes.allSatisfy { $0 <= 1_000 })
        // A second stream reads the same bytes again (AFN's NSCopying).
        #expect(Self.drain(form.makeInputStream()).0 == expected)
        form.throttleBandwidth(packetSize: 512, delay: 0)
        #expect(Self.drain(form.makeInputStream()).1.allSatisfy { $0 <= 512 })
        let streamForm = MultipartFormData(boundary: "B")
        streamForm.appendPart(inputStream: InputStream(data: Data("abc".utf8)), name: "s", fileName: "s", length: 3, mimeType: "x/y")
        let framed = "--B\r\nContent-Disposition: form-data; name=\"s\"; filename=\"s\"\r\nContent-Type: x/y\r\n\r\nabc\r\n--B--\r\n"
        #expect(Self.drain(streamForm.makeInputStream()).0 == Data(framed.utf8))
    }

    @Test func dataSlicesAreFramedFromTheirOwnStart() async throws {
        // A Data slice keeps its parent's indices (here 100..<106); both body producers must
        // read the slice's bytes, not the parent's first bytes.
        let parent = Data((0..<200).map { UInt8(truncatingIfNeeded: $0) })
        let slice = parent[100..<106]
        let form = MultipartFormData(boundary: "B")
        form.appendPart(formData: slice, name: "s")
        var expected = Data("--B\r\nContent-Disposition: form-data; name=\"s\"\r\n\r\n".utf8)
        expected.append(contentsOf: [100, 101, 102, 103, 104, 105])
        expected.append(Data("\r\n--B--\r\n".utf8))
        #expect(try await Self.body(of: form) == expected)
        let (streamed, _, finished) = Self.drain(form.makeInputStream(), bufferSize: 4)
        #expect(finished)
        #expect(streamed == expected)
        #expect(form.contentLength == Int64(expected.count))
    }

    @Test func inputStreamOfAnEmptyFormIsEmptyAndSequencesFail() {
        let (empty, _, finished) = Self.drain(MultipartFormData().makeInputStream())
        #expect(empty.isEmpty && finished)
        let form = MultipartFormData()
        form.appendPart(chunks: AsyncStream<Data> { $0.finish() }, name: "q", fileName: "q", length: 0, mimeType: "x/y")
        let (_, _, ok) = Self.drain(form.makeInputStream())
        #expect(!ok)
    }

    /// `appendPart` of a path naming a FIFO refuses it as not a regular file, without opening it
    /// (an open would release a writer blocked on it).
    @Test func appendingAFIFOIsRefusedWithoutOpeningIt() throws {
        let url = try Self.temporaryFile(Data(), name: "fifo")
        #expect(unlink(url.path) == 0)
        #expect(mkfifo(url.path, 0o600) == 0)
        let probe = try #require(PathOpenProbe(path: url.path))
        #expect {
            try MultipartFormData().appendPart(fileURL: url, name: "f")
        } throws: { error in
            guard case .requestSerializationFailed(.notARegularFile(let path)) = error as? CourierError else { return false }
            return path == url.path
        }
        #expect(!probe.wasOpened(), "appendPart opened the FIFO")
    }

    /// A file part given as a symbolic link sends the file it points to, as `curl -F @link` and
    /// the engine's file bodies do (the link is followed when the file is opened).
    @Test func aSymbolicLinkToAFileIsSentAsThatFile() async throws {
        let target = try Self.temporaryFile(Data("linked bytes".utf8), name: "target.txt")
        let link = target.deletingLastPathComponent().appendingPathComponent("link.txt")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: target)
        let form = MultipartFormData(boundary: "B")
        try form.appendPart(fileURL: link, name: "f")
        let body = String(decoding: try await Self.body(of: form), as: UTF8.self)
        #expect(body.contains("filename=\"link.txt\"\r\nContent-Type: text/plain\r\n\r\nlinked bytes\r\n--B--\r\n"))
        #expect(form.contentLength == Int64(body.utf8.count))
    }

    /// A file part's path that names a FIFO by the time the body is read (the file was swapped
    /// after `appendPart`) ends the body with a typed error in all three producers. Opening a
    /// FIFO for reading blocks until a writer comes: a producer that opened the path plainly
    /// would hold its thread (a thread-pool or cooperative thread, or an InputStream reader)
    /// forever. The watchdog plays that writer after 5 s so a regression fails instead of hanging.
    @Test(arguments: ["data", "buffers", "inputStream"])
    func aFilePartSwappedForAFIFOFailsWithoutBlocking(producer: String) async throws {
        let url = try Self.temporaryFile(Data(repeating: 3, count: 1_000), name: "swapped.bin")
        let form = MultipartFormData(boundary: "B")
        try form.appendPart(fileURL: url, name: "file")
        #expect(unlink(url.path) == 0)
        #expect(mkfifo(url.path, 0o600) == 0)
        let probe = try #require(PathOpenProbe(path: url.path))
        // A thread of its own, not a task: a blocked open holds a cooperative thread, and two
        // of these cases at once would leave none to run a watchdog task.
        let watchdog = FIFOWriterWatchdog(path: url.path, after: 5)
        var failure: (any Error)?
        do {
            switch producer {
            case "data":
                try await form.writeBody(into: { (_: Data) in })
            case "buffers":
                try await form.writeBody(intoBuffers: { _ in })
            default:
                let stream = form.makeInputStream()
                let (_, _, finished) = Self.drain(stream)
                if !finished { failure = stream.streamError }
            }
        } catch {
            failure = error
        }
        let blocked = watchdog.stop()
        // Learnt without opening it: an open would release a writer blocked on the FIFO.
        #expect(!probe.wasOpened(), "the \(producer) producer opened the FIFO")
        #expect(!blocked, "the \(producer) producer blocked opening the FIFO until a writer came")
        #expect(failure != nil, "the \(producer) producer sent a FIFO as the file part")
        do {
            guard case .requestSerializationFailed(.notARegularFile(let path)) = failure as? CourierError else {
                Issue.record("expected notARegularFile, got \(String(describing: failure))")
                return
            }
            #expect(path == url.path)
        }
    }

    /// A file part is sent as exactly the length `appendPart` measured: a file that shrank
    /// since ends the body with a typed error naming the shortfall (never a short part under a
    /// longer Content-Length), and one that grew has only its first bytes sent, in all three
    /// producers.
    @Test(arguments: ["data", "buffers", "inputStream"])
    func aFilePartThatChangedSizeIsSentAsMeasured(producer: String) async throws {
        let original = Data((0..<200_000).map { UInt8(truncatingIfNeeded: $0 % 251) })
        let url = try Self.temporaryFile(original, name: "changing.bin")
        let form = MultipartFormData(boundary: "B")
        try form.appendPart(fileURL: url, name: "file")
        let expected = try await Self.body(of: form)
        let handle = try FileHandle(forWritingTo: url)
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(repeating: 0xEE, count: 70_000))
        let grown = await Self.produce(form, with: producer)
        #expect(grown.error == nil, "\(producer): \(String(describing: grown.error))")
        #expect(grown.body == expected, "\(producer): the grown file's extra bytes were sent")

        try handle.truncate(atOffset: 150_000)
        try handle.close()
        let shrunk = await Self.produce(form, with: producer)
        #expect(shrunk.body.count < expected.count)
        guard case .requestSerializationFailed(.bodyStreamFailed(let reason)) = shrunk.error as? CourierError else {
            Issue.record("\(producer): expected bodyStreamFailed, got \(String(describing: shrunk.error))")
            return
        }
        #expect(reason.contains("ended 50000 bytes"), "\(producer): the reason names the 50000 missing bytes: \(reason)")
    }

    /// A file part's path that names another file by the time the body is read (a symbolic
    /// link to another file put in its place, or another file renamed over it after
    /// `appendPart`) is refused with a typed error in all three producers, and none of that
    /// other file's bytes are sent: the form sends the file that was appended and measured, as
    /// the engine's own file bodies do (``FileChunkReader``).
    @Test(arguments: ["data", "buffers", "inputStream"], ["link", "renamed"])
    func aFilePartReplacedAfterAppendingIsRefused(producer: String, replacement: String) async throws {
        let url = try Self.temporaryFile(Data(repeating: UInt8(ascii: "p"), count: 5_000), name: "appended.txt")
        let other = url.deletingLastPathComponent().appendingPathComponent("other.txt")
        try Data(repeating: UInt8(ascii: "S"), count: 8_000).write(to: other)
        let form = MultipartFormData(boundary: "B")
        try form.appendPart(fileURL: url, name: "file")
        #expect(unlink(url.path) == 0)
        if replacement == "link" {
            try FileManager.default.createSymbolicLink(at: url, withDestinationURL: other)
        } else {
            #expect(rename(other.path, url.path) == 0)
        }
        let (body, failure) = await Self.produce(form, with: producer)
        #expect(!body.contains(UInt8(ascii: "S")), "\(producer), \(replacement): the other file's bytes were sent")
        guard case .requestSerializationFailed(.bodyStreamFailed(let reason)) = failure as? CourierError else {
            Issue.record("\(producer), \(replacement): expected bodyStreamFailed, got \(String(describing: failure))")
            return
        }
        #expect(reason.contains(url.path) && reason.contains("replaced"), "\(producer), \(replacement): \(reason)")
    }
}

/// Opens a FIFO's writing end after a delay, once, if a reader is blocked on it by then (and
/// records that it had to): what unblocks a producer that opened the FIFO plainly.
private final class FIFOWriterWatchdog: Sendable {
    private let state = Mutex((done: false, wrote: false))

    init(path: String, after seconds: Double) {
        Thread.detachNewThread { [self] in
            Thread.sleep(forTimeInterval: seconds)
            while !state.withLock({ $0.done }) {
                // Succeeds only while a reader has the FIFO open (or is blocked opening it).
                let writer = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC)
                if writer >= 0 {
                    close(writer)  // the reader now sees the FIFO's end
                    state.withLock { $0.wrote = true }
                    return
                }
                Thread.sleep(forTimeInterval: 0.05)
            }
        }
    }

    /// Stops watching; whether it had to unblock a reader.
    func stop() -> Bool {
        state.withLock { state in
            state.done = true
            return state.wrote
        }
    }
}
