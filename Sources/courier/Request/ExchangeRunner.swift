import Courier
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What one run of a request produced: the response (possibly with an error when the body
/// failed), the body in memory or the downloaded file, and the task's timings.
struct Exchange: Sendable {
    var response: HTTPURLResponse?
    var body: Data?
    var fileURL: URL?
    var error: (any Error)?
    var metrics: EngineMetrics?
    /// The task that ran (its received head: wire order, version).
    var task: SessionTask?
    /// Redirects followed by the command itself (`--all --follow`); the session's own are the
    /// task's ``SessionTask/redirectCount``.
    var redirects = 0
}

/// Runs requests on a `URLSessionManager` (data, streamed multipart upload, download and
/// resumed download tasks) and awaits their completion block.
enum ExchangeRunner {
    /// A data task, a streamed upload task for a multipart request, or a file upload task for
    /// an `@file` body (streamed from disk by the engine, never read whole).
    static func send(_ prepared: PreparedRequest, with manager: URLSessionManager) async -> Exchange {
        var task: SessionTask?
        let result: Exchange = await withCheckedContinuation { continuation in
            let completion: @Sendable (HTTPURLResponse?, (any Sendable)?, (any Error)?) -> Void = { response, object, error in
                continuation.resume(returning: Exchange(response: response, body: object as? Data, error: error))
            }
            if let multipart = prepared.multipart {
                task = manager.uploadTask(
                    withStreamedRequest: multipart.urlRequest, body: multipart.makeRequestBody(),
                    completionHandler: completion)
            } else if let file = prepared.bodyFile {
                task = manager.uploadTask(with: prepared.urlRequest, fromFile: file.url, completionHandler: completion)
            } else {
                task = manager.dataTask(with: prepared.urlRequest, completionHandler: completion)
            }
            task?.resume()
        }
        var exchange = result
        exchange.metrics = task?.metrics
        exchange.task = task
        return exchange
    }

    /// A download task (or, with `resumeData`, a resumed one) that reports progress as
    /// (bytes so far, bytes expected or -1) and moves the file to `destination(response)`.
    static func download(
        _ request: URLRequest,
        resumeData: DownloadResumeData?,
        with manager: URLSessionManager,
        progress: @escaping @Sendable (Int64, Int64) -> Void,
        destination: @escaping @Sendable (URL, HTTPURLResponse) -> URL
    ) async -> Exchange {
        var task: SessionTask?
        let result: Exchange = await withCheckedContinuation { continuation in
            let report: @Sendable (Progress) -> Void = { value in
                progress(value.completedUnitCount, value.totalUnitCount)
            }
            let completion: @Sendable (HTTPURLResponse?, URL?, (any Error)?) -> Void = { response, url, error in
                continuation.resume(returning: Exchange(response: response, fileURL: url, error: error))
            }
            if let resumeData {
                task = manager.downloadTask(
                    withResumeData: resumeData, progress: report, destination: destination, completionHandler: completion)
            } else {
                task = manager.downloadTask(
                    with: request, progress: report, destination: destination, completionHandler: completion)
            }
            task?.resume()
        }
        var exchange = result
        exchange.metrics = task?.metrics
        exchange.task = task
        return exchange
    }
}
