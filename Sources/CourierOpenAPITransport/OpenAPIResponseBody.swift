import Courier
import Foundation
import HTTPTypes
import OpenAPIRuntime

/// The response side of ``CourierOpenAPITransport``: a session ``Courier/ResponseBodyStream``
/// as the runtime's `HTTPBody`, chunk by chunk as they arrive, with the stream's backpressure
/// (the session stops reading the socket while too much waits unread). Iterable once, like the
/// stream; dropping the body (or its iterator) before the end cancels the request.
enum OpenAPIResponseBody {
    /// `stream` as an `HTTPBody` whose length is the response's `Content-Length` when the
    /// bytes handed over are the bytes counted (no `Content-Encoding` that the session
    /// decompressed), unknown otherwise.
    static func body(of stream: ResponseBodyStream, response: HTTPResponse) -> HTTPBody {
        HTTPBody(Chunks(stream: stream), length: length(of: response), iterationBehavior: .single)
    }

    /// The body's length as the runtime sees it: `Content-Length` when it counts the bytes
    /// delivered (no content coding other than `identity`), else unknown.
    static func length(of response: HTTPResponse) -> HTTPBody.Length {
        let coding = response.headerFields[.contentEncoding]?.trimmingCharacters(in: .whitespaces).lowercased() ?? ""
        guard coding.isEmpty || coding == "identity",
            let value = response.headerFields[.contentLength], let count = Int64(value), count >= 0
        else { return .unknown }
        return .known(count)
    }

    /// The stream's `Data` chunks as the runtime's byte chunks.
    struct Chunks: AsyncSequence, Sendable {
        typealias Element = HTTPBody.ByteChunk
        let stream: ResponseBodyStream

        struct AsyncIterator: AsyncIteratorProtocol {
            var base: ResponseBodyStream.AsyncIterator

            mutating func next() async throws -> HTTPBody.ByteChunk? {
                guard let chunk = try await base.next() else { return nil }
                return ArraySlice(chunk)
            }
        }

        func makeAsyncIterator() -> AsyncIterator {
            AsyncIterator(base: stream.makeAsyncIterator())
        }
    }
}
