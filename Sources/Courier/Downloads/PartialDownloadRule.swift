import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What a download that ended early leaves behind, as a pure function: the resume data
/// describing its partial file, or nothing (then a temporary file is removed; the caller's own
/// partial file never is).
///
/// Resume data is made only when it was asked for (``DownloadTask/cancel(byProducingResumeData:)``)
/// or the transfer failed (not a plain cancel), the server sent the resource itself (200 or
/// 206) without a content coding (a decoded body's bytes are not the ranges' bytes), and the
/// file holds something (bytes were written, or it is the caller's partial file). Its request
/// is the one the task was resumed from (else the original), without `Range` and `If-Range`;
/// the validator and complete length come from this response, else from the previous resume data;
/// the caller's choices (without a validator, restart) are the previous resume data's.
enum PartialDownloadRule {
    /// The resume data for `file`, or nil when the partial file is not worth keeping.
    /// - Parameters:
    ///   - response: The delivered response, if any.
    ///   - keep: Resume data was asked for, or the transfer failed (not a plain cancel).
    ///   - wroteBytes: The task wrote at least one byte to `file`.
    ///   - isCallersFile: `file` is the partial file of the resume data the task was made with.
    ///   - originalRequest: The task's original request.
    ///   - previous: The resume data the task was made with.
    static func resumeData(
        for file: URL, response: HTTPURLResponse?, keep: Bool, wroteBytes: Bool, isCallersFile: Bool,
        originalRequest: URLRequest?, previous: DownloadResumeData?
    ) -> DownloadResumeData? {
        let contentCoded = ResumeResponseRule.isContentCoded(response?.value(forHTTPHeaderField: "Content-Encoding"))
        let usable = keep && !contentCoded && (response?.statusCode == 200 || response?.statusCode == 206)
        guard usable, let response, wroteBytes || isCallersFile, let original = originalRequest else { return nil }
        var request = previous?.request ?? original
        request.setValue(nil, forHTTPHeaderField: "Range")
        request.setValue(nil, forHTTPHeaderField: "If-Range")
        let validator = DownloadResumeData.validator(of: response) ?? previous?.validator
        let total = ResumeResponseRule.completeLength(
            status: response.statusCode, contentRange: response.value(forHTTPHeaderField: "Content-Range"),
            contentLength: response.value(forHTTPHeaderField: "Content-Length"), contentCoded: contentCoded)
        return DownloadResumeData(
            request: request, partialFileURL: file, validator: validator,
            allowsResumeWithoutValidator: previous?.allowsResumeWithoutValidator ?? false,
            totalLength: total ?? previous?.totalLength, allowsRestart: previous?.allowsRestart ?? true)
    }
}
