import Foundation

/// What a resumed download does with the response to its request (`Range: bytes=<offset>-`,
/// or no `Range` when it starts over): the pure rules, free of I/O.
///
/// - `206` to a request without `Range` is refused: RFC 9110 §15.3.7 allows a 206 only as the
///   answer to a range request, and its bytes are not the whole representation (writing them
///   as the complete file would end the download short without an error).
/// - `206` must carry a strict ``ContentRange`` starting exactly at the requested offset, a
///   `Content-Length` (when present) equal to the range's length, and a complete length that
///   agrees with the one already known; then the body is appended at the offset. Anything else
///   is refused: splicing a range that starts elsewhere, or of another length, corrupts the file.
/// - `200` is the whole representation: the partial file is truncated and written from 0, unless
///   it may not be started over (``DownloadResumeData/allowsRestart`` false and the file holds
///   bytes): then it is refused and the file is left as it was.
/// - `416` with `bytes */<offset>`: the partial file already holds everything.
/// - Any other status: not a resumption; the body goes to a temporary file as for any download.
///
/// All arithmetic on numbers from the server is checked: an overflow is a refusal, not a trap.
enum ResumeResponseRule: Equatable, Sendable {
    /// Append the body after `offset` bytes; the file will hold `expectedTotal` bytes
    /// (-1 when unknown).
    case append(offset: Int64, expectedTotal: Int64)
    /// Truncate the partial file and write the whole body from 0 (`expectedTotal` -1 when unknown).
    case restart(expectedTotal: Int64)
    /// The partial file is already complete (416 naming exactly its size).
    case alreadyComplete
    /// Not an answer to the range request (an error status): handled as a plain download.
    case notResumed
    /// The response can't be applied to the partial file without corrupting it.
    case refuse(reason: String)

    /// Decides for a response with `status`, its `Content-Range` and `Content-Length` values, to
    /// a request for the bytes from `requestedOffset` (nil: the request had no `Range`, it asked
    /// for the whole resource), when the
    /// representation's complete length is `knownTotal` (nil: not known). A `contentCoded` 206
    /// is refused: its decoded bytes are not the range's bytes. A 200 is refused unless
    /// `mayRestart` (the partial file may be truncated and written from 0).
    static func decide(
        status: Int, requestedOffset: Int64?, contentRange: String?, contentLength: String?, knownTotal: Int64?,
        contentCoded: Bool = false, mayRestart: Bool = true
    ) -> ResumeResponseRule {
        guard let offset = requestedOffset else {
            guard status != 206 else {
                return .refuse(
                    reason: "the server answered a request without Range with 206 Partial Content"
                        + (contentRange.map { " (\($0))" } ?? "") + ", which HTTP forbids: those bytes are not the whole resource")
            }
            return decide(
                status: status, requestedOffset: 0, contentRange: contentRange, contentLength: contentLength,
                knownTotal: knownTotal, contentCoded: contentCoded, mayRestart: mayRestart)
        }
        let requestedOffset = offset
        switch status {
        case 206 where contentCoded:
            return .refuse(reason: "a 206 response with a content coding (ranges count the encoded bytes)")
        case 206:
            guard let header = contentRange else {
                return .refuse(reason: "a 206 response without a Content-Range (several ranges are not supported)")
            }
            guard let range = ContentRange(header), let first = range.first, let last = range.last,
                let length = range.length
            else { return .refuse(reason: "a malformed Content-Range: \(header)") }
            guard first == requestedOffset else {
                return .refuse(reason: "the server sent bytes from \(first), not from the requested offset \(requestedOffset)")
            }
            if let contentLength {
                guard let declared = ContentRange.number(Substring(contentLength)) else {
                    return .refuse(reason: "a malformed Content-Length: \(contentLength)")
                }
                guard declared == length else {
                    return .refuse(reason: "Content-Length \(declared) disagrees with Content-Range \(header)")
                }
            }
            if let knownTotal, let complete = range.completeLength, complete != knownTotal {
                return .refuse(reason: "the complete length changed from \(knownTotal) to \(complete)")
            }
            // `last < Int64.max` is not guaranteed when the complete length is `*`.
            let (end, overflow) = last.addingReportingOverflow(1)
            guard !overflow else { return .refuse(reason: "a Content-Range past the largest file size: \(header)") }
            return .append(offset: first, expectedTotal: range.completeLength ?? (knownTotal ?? end))
        case 200 where !mayRestart:
            let why = requestedOffset > 0
                ? "the server answered the request for the bytes from \(requestedOffset) with 200 and the whole resource "
                    + "(it ignored the range, or the resource changed)"
                : "the server sent the whole resource with 200 (no range was asked for: there is no validator)"
            return .refuse(reason: why + ", and the partial file may not be started over (allowsRestart is false)")
        case 200:
            let total = contentLength.flatMap { ContentRange.number(Substring($0)) } ?? -1
            return .restart(expectedTotal: total)
        case 416:
            if requestedOffset > 0, let header = contentRange, let range = ContentRange(header), range.first == nil,
                range.completeLength == requestedOffset
            {
                return .alreadyComplete
            }
            return .notResumed
        default:
            return .notResumed
        }
    }

    /// Whether a `Content-Encoding` value names a coding (anything but nothing or `identity`).
    static func isContentCoded(_ contentEncoding: String?) -> Bool {
        guard let coding = contentEncoding?.trimmingCharacters(in: .whitespaces).lowercased() else { return false }
        return !coding.isEmpty && coding != "identity"
    }

    /// The representation's complete length a response states, kept in resume data so that a
    /// later `206` can be checked against it: a `206`'s complete length, or a `200`'s
    /// `Content-Length`; nil when not stated (or the body was content-coded, so its length is
    /// not the representation's).
    static func completeLength(status: Int, contentRange: String?, contentLength: String?, contentCoded: Bool) -> Int64? {
        switch status {
        case 206: return contentRange.flatMap(ContentRange.init)?.completeLength
        case 200: return contentCoded ? nil : contentLength.flatMap { ContentRange.number(Substring($0)) }
        default: return nil
        }
    }
}
