public import Foundation
#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

/// Every task kind for Swift concurrency: data, uploads (from `Data`, a file, an async
/// sequence, a multipart form) and downloads (to a destination, or resumed), each returned as a
/// ``TransferHandle`` already resumed, with its progress as async sequences and its result to
/// await. The same tasks as the block shape (they are in ``URLSessionManager/tasks``; hooks,
/// monitors, notifications, redirects, authentication and cookies apply); no completion block
/// runs on ``URLSessionManager/completionQueue`` for them.
///
/// Data and upload transfers return the body as `Data` with the final response, any status
/// (no serializer runs; use ``TransferHandle/decoded(as:decoder:)`` or
/// ``TransferHandle/serialized(by:)`` for a validated, typed result).
///
/// Every call takes an optional `interceptor` (default nil) for that transfer only: it adapts
/// each attempt and decides retries (``RequestInterceptor``), after the manager's
/// ``URLSessionManager/interceptor``. A retried download's failed attempt never reaches the
/// destination; a body that can't be sent again (a single-pass sequence) is never retried.
extension URLSessionManager {
    /// Sends `request` (with its `httpBody` or `httpBodyStream`) and gathers the response body;
    /// the handle gives its download progress.
    ///
    /// ```swift
    /// let transfer = manager.transfer(for: URLRequest(url: url))
    /// for await progress in transfer.downloadProgress { print(progress.completedUnitCount) }
    /// let body = try await transfer.value
    /// ```
    public func transfer(for request: URLRequest, interceptor: (any RequestInterceptor)? = nil) -> TransferHandle<Data> {
        startTransfer(
            { DataTask(taskIdentifier: $0, request: request) }, kind: .data, request: request, body: Self.body(of: request),
            interceptor: interceptor)
    }

    /// Uploads `data` as the body of `request` (its method is used: set `httpMethod`).
    public func upload(_ data: Data, with request: URLRequest, interceptor: (any RequestInterceptor)? = nil) -> TransferHandle<Data> {
        startTransfer(
            { UploadTask(taskIdentifier: $0, request: request) }, kind: .upload, request: request, body: .data(data),
            interceptor: interceptor)
    }

    /// Uploads the file at `fileURL`, streamed from disk (never loaded whole), with
    /// `Content-Length`. A missing or unreadable file fails the transfer.
    public func upload(fileAt fileURL: URL, with request: URLRequest, interceptor: (any RequestInterceptor)? = nil) -> TransferHandle<Data> {
        startTransfer(
            { UploadTask(taskIdentifier: $0, request: request) }, kind: .upload, request: request,
            body: .file(path: fileURL.path), interceptor: interceptor)
    }

    /// Uploads the chunks of `chunks` as they come, with backpressure: the next chunk is asked
    /// for only once the connection took the previous one, so a fast producer never fills
    /// memory. With `length` the request carries `Content-Length` (the chunks must add up to
    /// it); without, it is sent chunked. Consumed once: a redirect that must resend it (307,
    /// 308) or a retry fails with ``CourierError/requestBodyNotReplayable(url:)``.
    ///
    /// ```swift
    /// let (chunks, feed) = AsyncStream<Data>.makeStream()
    /// let upload = manager.upload(chunks, with: request)
    /// feed.yield(Data("hello".utf8)); feed.finish()
    /// ```
    public func upload<Chunks: AsyncSequence & Sendable>(
        _ chunks: Chunks, length: Int64? = nil, with request: URLRequest, interceptor: (any RequestInterceptor)? = nil
    ) -> TransferHandle<Data> where Chunks.Element == Data {
        startTransfer(
            { UploadTask(taskIdentifier: $0, request: request) }, kind: .upload, request: request,
            body: .sequence(chunks, length: length), interceptor: interceptor)
    }

    /// Uploads a sequence of single bytes (a `FileHandle`'s or `URL`'s `bytes`, say), sent in
    /// batches of 64 KiB with the backpressure of the `Data`-chunk `upload(_:length:with:)`.
    public func upload<Bytes: AsyncSequence & Sendable>(
        _ bytes: Bytes, length: Int64? = nil, with request: URLRequest, interceptor: (any RequestInterceptor)? = nil
    ) -> TransferHandle<Data> where Bytes.Element == UInt8 {
        startTransfer(
            { UploadTask(taskIdentifier: $0, request: request) }, kind: .upload, request: request,
            body: Self.batched(bytes, length: length), interceptor: interceptor)
    }

    /// Downloads the response body to a file, streamed to disk, then moves it to
    /// `destination` (replacing a regular file there; nil keeps it at its temporary URL). The
    /// value is the file's URL. A status outside 200..<300 throws
    /// ``CourierError/unacceptableStatusCode(response:data:underlying:)``.
    ///
    /// ```swift
    /// let download = manager.download(URLRequest(url: url), to: destination)
    /// let file = try await download.value
    /// ```
    /// - Throws (when awaited): the transfer's error; ``CourierError/cannotMoveDownloadedFile(from:to:reason:)``
    ///   when the file could not be put at `destination` (it stays where the error says).
    ///   After a failure part-way, ``TransferHandle/resumeData`` continues it.
    public func download(_ request: URLRequest, to destination: URL? = nil, interceptor: (any RequestInterceptor)? = nil) -> TransferHandle<URL> {
        startDownload(request: request, resumeData: nil, destination: destination, interceptor: interceptor)
    }

    /// Continues a download from `resumeData` (see
    /// ``downloadTask(withResumeData:progress:destination:completionHandler:)`` for how the
    /// server's answer is checked), then moves the file to `destination` (nil keeps it where
    /// the partial file was). Progress starts from the bytes already there.
    public func download(
        resumingWith resumeData: DownloadResumeData, to destination: URL? = nil, interceptor: (any RequestInterceptor)? = nil
    ) -> TransferHandle<URL> {
        startDownload(
            request: resumeData.rangeRequest(offset: resumeData.resumeOffset), resumeData: resumeData, destination: destination,
            interceptor: interceptor)
    }

    // MARK: - Underneath

    private func startDownload(
        request: URLRequest, resumeData: DownloadResumeData?, destination: URL?, interceptor: (any RequestInterceptor)?
    ) -> TransferHandle<URL> {
        let movesElsewhere = hooks.downloadTaskDidFinishDownloading != nil
        var move: (@Sendable (URL, HTTPURLResponse) -> URL)?
        if let destination { move = { _, _ in destination } }
        return startTransfer(
            { DownloadTask(taskIdentifier: $0, request: request) },
            kind: .download(destination: move),
            request: request, body: Self.body(of: request), resumeData: resumeData, serializer: HTTPResponseSerializer(),
            interceptor: interceptor,
            value: { (object: (any Sendable)?) throws -> URL in
            guard let file = object as? URL else {
                throw CourierError.cannotWriteDownloadFile(path: destination?.path ?? "", reason: "the download produced no file")
            }
            if let destination, !movesElsewhere, file.standardizedFileURL.path != destination.standardizedFileURL.path {
                throw CourierError.cannotMoveDownloadedFile(
                    from: file, to: destination, reason: "the move failed; the file is still at \(file.path)")
            }
            return file
        })
    }

    /// Registers and resumes a task whose end resolves the returned handle; its progress
    /// sequences are subscribed before it starts. `interceptor` is the task's own, set before
    /// it starts (as ``dataTask(with:interceptor:uploadProgress:downloadProgress:completionHandler:)`` does).
    func startTransfer<T: SessionTask>(
        _ make: (Int) -> T, kind: TaskDelegate.Kind, request: URLRequest, body: RequestBody?,
        bodyFactory: (@Sendable () -> RequestBody?)? = nil, interceptor: (any RequestInterceptor)? = nil
    ) -> TransferHandle<Data> {
        startTransfer(
            make, kind: kind, request: request, body: body, bodyFactory: bodyFactory, interceptor: interceptor,
            value: { (object: (any Sendable)?) -> Data in object as? Data ?? Data() })
    }

    func startTransfer<T: SessionTask, Value: Sendable>(
        _ make: (Int) -> T, kind: TaskDelegate.Kind, request: URLRequest, body: RequestBody?,
        resumeData: DownloadResumeData? = nil, bodyFactory: (@Sendable () -> RequestBody?)? = nil,
        serializer: (any ResponseSerializer)? = nil, interceptor: (any RequestInterceptor)? = nil,
        value: @escaping @Sendable ((any Sendable)?) throws -> Value
    ) -> TransferHandle<Value> {
        let completion = TransferCompletion<Value>()
        let box = TaskBox<SessionTask>()
        let queue = processingQueue
        let setup = TaskSetup(
            completion: { _, object, error in
                completion.resolve(Self.transferResult(of: box.task, object: object, error: error, url: request.url, value: value))
            },
            serializer: serializer,
            resumeData: resumeData,
            bodyFactory: bodyFactory,
            // The end runs on the processing queue (never on the canceller's thread or an
            // event loop); the completion only resolves the handle.
            finisher: { work in queue.async(execute: work) },
            keepsEngineHead: true)
        let task = register(make, kind: kind, body: body, setup: setup)
        if let interceptor { task.snapshot.withLock { $0.interceptor = interceptor } }
        box.task = task
        let handle = TransferHandle(task: task, completion: completion)
        task.resume()
        return handle
    }

    private static func transferResult<Value: Sendable>(
        of task: SessionTask?, object: (any Sendable)?, error: (any Error)?, url: URL?,
        value: @Sendable ((any Sendable)?) throws -> Value
    ) -> Result<TransferCompletion<Value>.Outcome, any Error> {
        if let error { return .failure(error) }
        guard let task else {
            return .failure(CourierError.connectionLost(url: url, reason: "the task ended without a result"))
        }
        let (head, responseURL, metrics) = task.snapshot.withLock { ($0.head, $0.responseURL, $0.metrics) }
        guard let head, let responseURL else {
            return .failure(CourierError.connectionLost(url: url, reason: "no response"))
        }
        return Result { TransferCompletion.Outcome(value: try value(object), head: head, url: responseURL, metrics: metrics) }
    }

    /// Single bytes gathered into 64 KiB writes.
    static func batched<Bytes: AsyncSequence & Sendable>(_ bytes: Bytes, length: Int64?) -> RequestBody
    where Bytes.Element == UInt8 {
        .stream(length: length) { writer in
            let batch = 64 << 10
            var chunk: [UInt8] = []
            chunk.reserveCapacity(batch)
            for try await byte in bytes {
                chunk.append(byte)
                if chunk.count == batch {
                    try await writer.write(contentsOf: chunk)
                    chunk.removeAll(keepingCapacity: true)
                }
            }
            if !chunk.isEmpty { try await writer.write(contentsOf: chunk) }
        }
    }
}

/// The same transfers with URL strings resolved against ``baseURL`` and requests made by
/// ``requestSerializer`` (its headers, timeout and authorization apply), and the same optional
/// per-transfer `interceptor`.
extension HTTPSessionManager {
    /// `method` on `urlString` with `parameters`, the body gathered as `Data`; see
    /// ``URLSessionManager/transfer(for:interceptor:)``.
    /// - Throws: ``CourierError/requestSerializationFailed(_:)`` for a bad URL or parameters.
    public func transfer(
        _ urlString: String, method: String = "GET", parameters: Parameters? = nil, headers: [String: String]? = nil,
        interceptor: (any RequestInterceptor)? = nil
    ) throws -> TransferHandle<Data> {
        transfer(
            for: try makeRequest(method: method, urlString: urlString, parameters: parameters, headers: headers),
            interceptor: interceptor)
    }

    /// Uploads `data` with `method` (default POST) to `urlString`.
    /// - Throws: ``CourierError/requestSerializationFailed(_:)`` for a bad URL.
    public func upload(
        _ data: Data, to urlString: String, method: String = "POST", headers: [String: String]? = nil, interceptor: (any RequestInterceptor)? = nil
    ) throws -> TransferHandle<Data> {
        upload(
            data, with: try makeRequest(method: method, urlString: urlString, parameters: nil, headers: headers),
            interceptor: interceptor)
    }

    /// Uploads the file at `fileURL`, streamed from disk, with `method` (default POST).
    /// - Throws: ``CourierError/requestSerializationFailed(_:)`` for a bad URL.
    public func upload(
        fileAt fileURL: URL, to urlString: String, method: String = "POST", headers: [String: String]? = nil, interceptor: (any RequestInterceptor)? = nil
    ) throws -> TransferHandle<Data> {
        upload(
            fileAt: fileURL, with: try makeRequest(method: method, urlString: urlString, parameters: nil, headers: headers),
            interceptor: interceptor)
    }

    /// Uploads `chunks` as they come, with backpressure (see the `Data`-chunk `upload(_:length:with:)`).
    /// - Throws: ``CourierError/requestSerializationFailed(_:)`` for a bad URL.
    public func upload<Chunks: AsyncSequence & Sendable>(
        _ chunks: Chunks, length: Int64? = nil, to urlString: String, method: String = "POST",
        headers: [String: String]? = nil, interceptor: (any RequestInterceptor)? = nil
    ) throws -> TransferHandle<Data> where Chunks.Element == Data {
        upload(
            chunks, length: length, with: try makeRequest(method: method, urlString: urlString, parameters: nil, headers: headers),
            interceptor: interceptor)
    }

    /// Uploads a sequence of single bytes in 64 KiB batches, with backpressure.
    /// - Throws: ``CourierError/requestSerializationFailed(_:)`` for a bad URL.
    public func upload<Bytes: AsyncSequence & Sendable>(
        _ bytes: Bytes, length: Int64? = nil, to urlString: String, method: String = "POST",
        headers: [String: String]? = nil, interceptor: (any RequestInterceptor)? = nil
    ) throws -> TransferHandle<Data> where Bytes.Element == UInt8 {
        upload(
            bytes, length: length, with: try makeRequest(method: method, urlString: urlString, parameters: nil, headers: headers),
            interceptor: interceptor)
    }

    /// POSTs a `multipart/form-data` body, streamed part by part: `parameters` become form
    /// parts, then `constructingBody` appends files, data or streams (AFNetworking's
    /// `POST:parameters:headers:constructingBodyWithBlock:`, awaited). A redirect that keeps
    /// the method re-reads the parts.
    ///
    /// ```swift
    /// let upload = try manager.uploadMultipart(to: "post", parameters: ["title": "cat"]) { form in
    ///     try form.appendPart(withFileURL: photoURL, name: "photo")
    /// }
    /// let echo = try await upload.decoded(as: Echo.self)
    /// ```
    /// - Throws: ``CourierError/requestSerializationFailed(_:)`` (a bad URL, a missing file).
    public func uploadMultipart(
        to urlString: String, parameters: Parameters? = nil, headers: [String: String]? = nil,
        interceptor: (any RequestInterceptor)? = nil, constructingBody: (MultipartFormData) throws -> Void
    ) throws -> TransferHandle<Data> {
        let multipart = try makeMultipartRequest(
            urlString: urlString, parameters: parameters, headers: headers, constructingBody: constructingBody)
        let request = multipart.urlRequest
        return startTransfer(
            { UploadTask(taskIdentifier: $0, request: request) }, kind: .upload, request: request,
            body: multipart.makeRequestBody(), bodyFactory: { multipart.makeRequestBody() }, interceptor: interceptor)
    }

    /// GETs `urlString` to a file moved to `destination`; see ``URLSessionManager/download(_:to:interceptor:)``.
    /// - Throws: ``CourierError/requestSerializationFailed(_:)`` for a bad URL or parameters.
    public func download(
        _ urlString: String, parameters: Parameters? = nil, headers: [String: String]? = nil, to destination: URL? = nil,
        interceptor: (any RequestInterceptor)? = nil
    ) throws -> TransferHandle<URL> {
        download(
            try makeRequest(method: "GET", urlString: urlString, parameters: parameters, headers: headers), to: destination,
            interceptor: interceptor)
    }
}
