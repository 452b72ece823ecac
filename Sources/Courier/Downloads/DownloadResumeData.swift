import CourierEngine
public import Foundation
#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

/// What a download needs to continue where it stopped: AFNetworking's resume data, as a value.
///
/// A download that fails or is cancelled with ``DownloadTask/cancel(byProducingResumeData:)``
/// after part of the body arrived offers one as ``DownloadTask/resumeData``. You can also make
/// one for a file you already hold part of (`courier --continue` does): the resumed task asks
/// for the remaining bytes with `Range` and `If-Range`, appends them on a `206 Partial Content`
/// that starts exactly at the partial file's end, and starts the file over (truncates it and
/// writes from byte 0) when the server sends the whole body with `200`, unless
/// ``allowsRestart`` is false (for a file that is the user's own: then a `200` fails the task
/// and the file is left as it was).
///
/// Safety rules:
/// - Without a ``validator`` the server can't tell whether the partial file came from the
///   version it serves now (RFC 9110 §13.1.5), so a resumed range could splice two versions.
///   Such resume data starts the download over from byte 0 unless
///   ``allowsResumeWithoutValidator`` is set (the caller vouches that the resource has not
///   changed, as `curl -C -` does).
/// - A `206` whose `Content-Range` is malformed, starts anywhere but the requested offset, or
///   states another complete length than ``totalLength`` fails the task with
///   ``CourierError/invalidResumeResponse(url:reason:)`` and leaves the partial file as it was.
/// - The partial file must be a regular file (or not exist yet, in an existing folder): a
///   directory, a symbolic link, a device or a FIFO is refused with
///   ``CourierError/cannotWriteDownloadFile(path:reason:)`` and is never written. The resume
///   offset is the file's actual size at the time the task is made, never a number from
///   elsewhere.
/// - The resumed request asks for `Accept-Encoding: identity` (unless the request sets one):
///   byte ranges count the encoded bytes, so a decoded body can't be resumed.
///
/// Persist it with ``encoded()`` and ``init(encoded:)``.
public struct DownloadResumeData: Sendable, Equatable {
    /// The request to resume (without `Range`; the resumed task adds it).
    public var request: URLRequest
    /// The file holding the bytes received so far.
    public var partialFileURL: URL
    /// The response's strong `ETag` or `Last-Modified`, sent as `If-Range` so that a changed
    /// resource is downloaded whole instead of spliced. Nil: the download starts over unless
    /// ``allowsResumeWithoutValidator``.
    public var validator: String?
    /// Whether to resume with a plain `Range` (no `If-Range`) when there is no ``validator``:
    /// the caller asserts that the partial file is a prefix of the current resource. Default
    /// false: without a validator the download starts over from byte 0.
    public var allowsResumeWithoutValidator: Bool
    /// The resource's complete length when known (from the response that was interrupted); a
    /// resumed `206` stating another complete length is refused. Nil: not checked.
    public var totalLength: Int64?
    /// Whether a `200` (the whole resource: the server ignored `Range`, the resource changed so
    /// `If-Range` did not match, or no range was asked for) may truncate the partial file and
    /// write the body into it from byte 0. Default true: the partial file is a download's own
    /// file and starting it over is right. Set it to false when the partial file holds bytes
    /// that must not be lost if the new transfer fails (a file the user resumes in place, as
    /// `courier --continue -o FILE` does): then such a `200` fails the task with
    /// ``CourierError/invalidResumeResponse(url:reason:)`` before any byte is written, and the
    /// partial file is left as it was. An empty or missing partial file is written as usual.
    public var allowsRestart: Bool

    /// Resume data for `request` whose first bytes are in `partialFileURL`.
    public init(
        request: URLRequest, partialFileURL: URL, validator: String? = nil, allowsResumeWithoutValidator: Bool = false,
        totalLength: Int64? = nil, allowsRestart: Bool = true
    ) {
        self.request = request
        self.partialFileURL = partialFileURL
        self.validator = validator
        self.allowsResumeWithoutValidator = allowsResumeWithoutValidator
        self.totalLength = totalLength
        self.allowsRestart = allowsRestart
    }

    /// The size of the partial file now (0 when it is missing or not a regular file; a
    /// symbolic link is not followed).
    public var offset: Int64 {
        if case .regularFile(let size) = DownloadFileSystem.kind(atPath: partialFileURL.path) { return size }
        return 0
    }

    /// Where the resumed task starts: ``offset`` when a range may be asked for (a validator, or
    /// the caller's ``allowsResumeWithoutValidator``), else 0.
    var resumeOffset: Int64 {
        validator != nil || allowsResumeWithoutValidator ? offset : 0
    }

    /// Why the partial file can't be used (a directory, a symbolic link, a device, a missing
    /// folder), or nil when it can.
    var partialFileProblem: String? {
        guard partialFileURL.isFileURL, partialFileURL.path.hasPrefix("/") else {
            return "the partial file \(partialFileURL) is not an absolute file path"
        }
        // "/x/part/" names a directory, whether or not one exists there yet.
        guard !partialFileURL.hasDirectoryPath else {
            return "the partial file \(partialFileURL.path) is named as a directory (its path ends in \"/\")"
        }
        return DownloadFileSystem.problem(withPath: partialFileURL.path)
    }

    /// The request the resumed task sends: ``request`` plus `Range: bytes=<offset>-` and
    /// `If-Range` (the validator) when `offset` is not 0, and `Accept-Encoding: identity`
    /// unless the request names an encoding.
    func rangeRequest(offset: Int64) -> URLRequest {
        var resumed = request
        resumed.setValue(nil, forHTTPHeaderField: "Range")
        resumed.setValue(nil, forHTTPHeaderField: "If-Range")
        if resumed.value(forHTTPHeaderField: "Accept-Encoding") == nil {
            resumed.setValue("identity", forHTTPHeaderField: "Accept-Encoding")
        }
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
        var allowsResumeWithoutValidator: Bool?
        var totalLength: Int64?
        var allowsRestart: Bool?
    }

    /// A JSON encoding of the resume data (URL, method, headers, partial file path, validator,
    /// the without-validator choice, the total length and the restart choice).
    public func encoded() throws -> Data {
        guard let url = request.url else {
            throw CourierError.requestSerializationFailed(.invalidURL(""))
        }
        let value = Encoded(
            url: url.absoluteString, method: request.httpMethod ?? "GET", headers: request.allHTTPHeaderFields ?? [:],
            partialFilePath: partialFileURL.path, validator: validator,
            allowsResumeWithoutValidator: allowsResumeWithoutValidator ? true : nil, totalLength: totalLength,
            allowsRestart: allowsRestart ? nil : false)
        return try JSONEncoder().encode(value)
    }

    /// Decodes what ``encoded()`` produced, checking it as input from outside: an http(s) URL,
    /// a method and header fields that are HTTP tokens and values (no CR, LF or NUL), a
    /// validator that is a header value, a non-negative total length, and an absolute partial
    /// file path naming a regular file or nothing yet in an existing folder (not a directory,
    /// a symbolic link or a device). The resume offset is never taken from the data: it is the
    /// partial file's size when the resumed task is made.
    /// - Throws: ``CourierError/invalidResumeData(_:)`` naming what is wrong.
    public init(encoded data: Data) throws {
        let value: Encoded
        do {
            value = try JSONDecoder().decode(Encoded.self, from: data)
        } catch {
            throw CourierError.invalidResumeData("not Courier resume data: \(error)")
        }
        guard let url = URL(string: value.url), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
            url.host != nil
        else {
            throw CourierError.invalidResumeData("not an http(s) URL: \(value.url)")
        }
        guard Self.isToken(value.method) else {
            throw CourierError.invalidResumeData("invalid method \(value.method.debugDescription)")
        }
        var request = URLRequest(url: url)
        request.httpMethod = value.method
        for (name, headerValue) in value.headers {
            guard Self.isToken(name), Self.isFieldValue(headerValue) else {
                throw CourierError.invalidResumeData("invalid header field \(name.debugDescription)")
            }
            request.setValue(headerValue, forHTTPHeaderField: name)
        }
        if let validator = value.validator, validator.isEmpty || !Self.isFieldValue(validator) {
            throw CourierError.invalidResumeData("invalid validator \(validator.debugDescription)")
        }
        if let total = value.totalLength, total < 0 {
            throw CourierError.invalidResumeData("negative total length \(total)")
        }
        let path = value.partialFilePath
        guard path.hasPrefix("/"), !path.utf8.contains(0) else {
            throw CourierError.invalidResumeData("the partial file path is not absolute: \(path.debugDescription)")
        }
        self.init(
            request: request, partialFileURL: URL(fileURLWithPath: path), validator: value.validator,
            allowsResumeWithoutValidator: value.allowsResumeWithoutValidator ?? false, totalLength: value.totalLength,
            allowsRestart: value.allowsRestart ?? true)
        if let problem = partialFileProblem {
            throw CourierError.invalidResumeData("unusable partial file: \(problem)")
        }
    }

    /// An HTTP token (RFC 9110 §5.6.2): a method or a field name.
    private static func isToken(_ text: String) -> Bool { HeaderValidation.isToken(text) }

    /// A field value without control characters other than tab (no CR, LF or NUL).
    private static func isFieldValue(_ text: String) -> Bool {
        text.utf8.allSatisfy { $0 == 9 || ($0 >= 32 && $0 != 127) }
    }
}
