public import Foundation
#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

/// What a download needs to continue where it stopped: AFNetworking's resume data, as a value.
///
/// A download that fails or is cancelled with ``DownloadTask/cancel(byProducingResumeData:)``
/// after part of the body arrived offers one as ``DownloadTask/resumeData``. You can also make
/// one for a file you already hold part of (`courier --continue` does): the resumed task asks
/// for the remaining bytes with `Range` (and `If-Range` when a validator is known), appends them
/// on `206 Partial Content`, and starts the file over when the server sends the whole body.
///
/// Persist it with ``encoded()`` and ``init(encoded:)``.
public struct DownloadResumeData: Sendable, Equatable {
    /// The request to resume (without `Range`; the resumed task adds it).
    public var request: URLRequest
    /// The file holding the bytes received so far.
    public var partialFileURL: URL
    /// The response's strong `ETag` or `Last-Modified`, sent as `If-Range` so that a changed
    /// resource is downloaded whole instead of spliced. Nil: no `If-Range`.
    public var validator: String?

    /// Resume data for `request` whose first bytes are in `partialFileURL`.
    public init(request: URLRequest, partialFileURL: URL, validator: String? = nil) {
        self.request = request
        self.partialFileURL = partialFileURL
        self.validator = validator
    }

    /// The size of the partial file now: the offset the download resumes at (0 when missing).
    public var offset: Int64 {
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: partialFileURL.path),
            let size = attributes[.size] as? NSNumber
        else { return 0 }
        return size.int64Value
    }

    /// The request the resumed task sends: ``request`` plus `Range: bytes=<offset>-` and
    /// `If-Range` when the partial file is not empty.
    func rangeRequest(offset: Int64) -> URLRequest {
        var resumed = request
        guard offset > 0 else { return resumed }
        resumed.setValue("bytes=\(offset)-", forHTTPHeaderField: "Range")
        if let validator { resumed.setValue(validator, forHTTPHeaderField: "If-Range") }
        return resumed
    }

    /// The validator a response offers for `If-Range`: a strong ETag, else Last-Modified.
    static func validator(of response: HTTPURLResponse) -> String? {
        if let etag = response.value(forHTTPHeaderField: "ETag"), !etag.hasPrefix("W/") { return etag }
        return response.value(forHTTPHeaderField: "Last-Modified")
    }

    private struct Encoded: Codable {
        var url: String
        var method: String
        var headers: [String: String]
        var partialFilePath: String
        var validator: String?
    }

    /// A JSON encoding of the resume data (URL, method, headers, partial file path, validator).
    public func encoded() throws -> Data {
        guard let url = request.url else {
            throw CourierError.requestSerializationFailed(.invalidURL(""))
        }
        let value = Encoded(
            url: url.absoluteString, method: request.httpMethod ?? "GET", headers: request.allHTTPHeaderFields ?? [:],
            partialFilePath: partialFileURL.path, validator: validator)
        return try JSONEncoder().encode(value)
    }

    /// Decodes what ``encoded()`` produced.
    /// - Throws: ``CourierError/invalidResumeData(_:)`` when `data` is not resume data.
    public init(encoded data: Data) throws {
        let value: Encoded
        do {
            value = try JSONDecoder().decode(Encoded.self, from: data)
        } catch {
            throw CourierError.invalidResumeData("not Courier resume data: \(error)")
        }
        guard let url = URL(string: value.url) else {
            throw CourierError.invalidResumeData("invalid URL \(value.url)")
        }
        var request = URLRequest(url: url)
        request.httpMethod = value.method
        for (name, headerValue) in value.headers { request.setValue(headerValue, forHTTPHeaderField: name) }
        self.init(request: request, partialFileURL: URL(fileURLWithPath: value.partialFilePath), validator: value.validator)
    }
}
