import CompressNIO
import Crypto
import Foundation
import NIOCore
import NIOHTTP1

/// What `/upload` reports of a body it streams through without keeping it: its length and
/// SHA-256. A body sent with `Content-Encoding: gzip` or `deflate` (the zlib format; a raw
/// deflate stream is accepted too) is inflated as it arrives, and the counts and hash are the
/// decoded bytes'; the reply then also names the coding, the encoded length and the
/// `Content-Length` the request carried (null when it had none).
///
/// Lives on its connection's event loop, one per request.
struct UploadDigest {
    private var decodedCount = 0
    private var encodedCount = 0
    private var hasher = SHA256()
    private var inflater: ZlibDecompressor?
    private let coding: String?
    private let contentLength: String?
    /// Set once the encoded body turned out not to decode.
    private var failure: String?

    init(head: HTTPRequestHead) {
        contentLength = head.headers.first(name: "content-length")
        let coding = head.headers.first(name: "content-encoding")?.trimmingCharacters(in: .whitespaces).lowercased()
        switch coding {
        case "gzip", "x-gzip":
            self.coding = coding
            inflater = try? ZlibDecompressor(algorithm: .gzip)
        case "deflate":
            self.coding = coding
            inflater = nil  // made on the first byte: zlib format or raw deflate
        default:
            self.coding = nil
        }
    }

    /// Takes in the next piece of the body.
    mutating func add(_ chunk: ByteBuffer) {
        encodedCount += chunk.readableBytes
        guard let coding, failure == nil else {
            if self.coding == nil { take(chunk) }
            return
        }
        if inflater == nil, coding == "deflate", let first = chunk.getInteger(at: chunk.readerIndex, as: UInt8.self) {
            // A zlib header's first byte has compression method 8 in its low nibble.
            inflater = try? ZlibDecompressor(algorithm: first & 0x0F == 8 ? .zlib : .deflate)
        }
        guard let inflater else {
            if chunk.readableBytes > 0 { failure = "the \(coding) decoder could not be made" }
            return
        }
        var input = chunk
        while input.readableBytes > 0 {
            var output = ByteBufferAllocator().buffer(capacity: 64 << 10)
            do {
                try inflater.inflate(from: &input, to: &output)
                take(output)
                if output.readableBytes == 0 { break }  // the stream ended; trailing bytes are ignored
            } catch let error as CompressNIOError where error == .bufferOverflow {
                take(output)  // output full: more to come
            } catch let error as CompressNIOError where error == .inputBufferOverflow {
                take(output)  // needs the next piece
                break
            } catch {
                failure = "the body is not valid \(coding): \(error)"
                return
            }
        }
    }

    private mutating func take(_ decoded: ByteBuffer) {
        decodedCount += decoded.readableBytes
        decoded.withUnsafeReadableBytes { hasher.update(bufferPointer: $0) }
    }

    /// The reply once the body has ended.
    func reply() -> ServerReply {
        if let failure {
            return .json(["error": .string(failure)], status: .badRequest)
        }
        let digest = hasher.finalize().hexString
        var fields: [String: JSONNode] = ["bytes": .int(decodedCount), "sha256": .string(digest)]
        if let coding {
            fields["content_encoding"] = .string(coding)
            fields["encoded_bytes"] = .int(encodedCount)
            fields["content_length"] = contentLength.map { .string($0) } ?? .null
        }
        return .json(.object(fields))
    }
}
