import Courier
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

/// `--download`: the body goes to a file (named by `-o`, the `Content-Disposition` header or
/// the URL), progress and the response head go to stderr.
///
/// With `-o FILE` the bytes are written to `FILE.part` as they arrive and renamed to `FILE` when
/// the download is complete, so an interrupted download (a reset, a kill) leaves `FILE.part`;
/// `--continue` resumes it with a `Range` request (without a validator it trusts that the
/// resource has not changed, as `curl -C -` does), or resumes `FILE` itself when there is no
/// `FILE.part`. A server that ignores the range (`200`, the whole resource) starts `FILE.part`
/// over (HTTPie's behaviour: it is courier's own file), but `FILE` itself is never truncated or
/// replaced: a `200`, or any 2xx but `206`, to its range request is refused and `FILE` is left
/// as it was (as `curl -C -` refuses). Without `--continue` a stale `FILE.part` is started over. `FILE` must be a
/// regular file or not exist, and so must `FILE.part`: a directory, a symbolic link or a device
/// is refused before anything is sent, and nothing is deleted. Without `-o` the partial file is a temporary file,
/// removed on every failure.
struct DownloadFlow {
    var manager: URLSessionManager
    var request: URLRequest
    var output: String?
    var resume: Bool
    var printHeaders: Bool

    /// Runs the download; returns the exit status (errors from the transfer are thrown).
    func run() async throws -> ExitStatus {
        let outputURL = output.map { URL(fileURLWithPath: $0) }
        let partialURL: URL
        if let outputURL {
            if let problem = Self.destinationProblem(outputURL) {
                throw FailureReport(status: .timeoutOrUsage, message: "cannot write to \(outputURL.path): \(problem); nothing was changed")
            }
            let part = URL(fileURLWithPath: outputURL.path + ".part")
            // `--continue` with no `.part` but a partial FILE: resume FILE in place.
            if resume, !FileManager.default.fileExists(atPath: part.path), Self.regularFileSize(outputURL) > 0 {
                partialURL = outputURL
            } else {
                partialURL = part
            }
        } else {
            partialURL = FileManager.default.temporaryDirectory.appendingPathComponent("courier-\(UUID().uuidString).part")
        }
        // The user's FILE resumed in place is never started over (truncated) by a 200.
        let inPlace = outputURL != nil && partialURL == outputURL
        let resumeData = DownloadResumeData(
            request: request, partialFileURL: partialURL, allowsResumeWithoutValidator: resume, allowsRestart: !inPlace)
        let initialOffset = resume ? resumeData.offset : 0  // read now: the file grows as the download runs
        // A second courier writing the same -o file at the same time is refused.
        let lock = outputURL == nil ? nil : try PartialFileLock.acquire(partialURL)
        defer { lock?.release() }
        if initialOffset > 0 {
            StandardStreams.writeError(Data("Resuming \(partialURL.path) from byte \(initialOffset)\n".utf8))
        }
        let bar = DownloadProgressBar(initialBytes: initialOffset)
        let requestURL = request.url
        let picked = Mutex<URL?>(nil)  // the name taken without -o (see uniqueURL)
        let exchange = await ExchangeRunner.download(
            request, resumeData: resumeData, with: manager,
            progress: { done, total in bar.update(done: done, total: total) },
            destination: { temporary, response in
                // 416 with the partial file itself: it already holds the whole resource.
                if response.statusCode == 416, temporary.standardizedFileURL == partialURL.standardizedFileURL, let outputURL {
                    return outputURL
                }
                guard (200..<300).contains(response.statusCode) else { return temporary }
                // Resuming FILE in place, a 2xx that is not the range (not written to FILE) never replaces FILE.
                if inPlace, temporary.standardizedFileURL != partialURL.standardizedFileURL { return temporary }
                if let outputURL { return outputURL }
                let pick = Self.uniqueURL(for: Self.suggestedFileName(response: response, url: requestURL))
                picked.withLock { $0 = pick }
                return pick
            })
        // A name taken for the file that did not end up there (the move failed) is given back.
        if let pick = picked.withLock({ $0 }), exchange.fileURL?.standardizedFileURL != pick.standardizedFileURL {
            Self.removeUnusedPlaceholder(pick)
        }
        if let error = exchange.error {
            cleanUpAfterFailure(partialURL: partialURL, outputURL: outputURL, leftover: exchange.fileURL, response: exchange.response)
            if let error = error as? CourierError, case .invalidResumeResponse = error,
                exchange.task?.originalRequest?.value(forHTTPHeaderField: "Range") == nil
            {
                // No range was asked for, yet a part came back (a 206): nothing is saved as the file.
                throw FailureReport(
                    status: .error,
                    message: "the server answered 206 Partial Content to a request for the whole file (no Range was sent), "
                        + "which HTTP forbids; nothing was saved"
                        + (outputURL != nil && Self.regularFileSize(partialURL) > 0 ? " and \(partialURL.path) was not changed" : ""))
            }
            if inPlace, let error = error as? CourierError, case .invalidResumeResponse = error {
                throw Self.inPlaceRefusal(error, file: partialURL, statusCode: exchange.response?.statusCode ?? 0)
            }
            throw error
        }
        guard let response = exchange.response else {
            cleanUpAfterFailure(partialURL: partialURL, outputURL: outputURL, leftover: exchange.fileURL, response: nil)
            throw FailureReport(status: .error, message: "no response")
        }
        if printHeaders {
            let head = ExchangePrinter(options: PrintOptions(isTerminal: isatty(STDERR_FILENO) == 1)).responseHead(ResponseHead(task: exchange.task, response: response))
            StandardStreams.writeError(Data(head.utf8))
        }
        let alreadyComplete = response.statusCode == 416 && outputURL != nil
            && exchange.fileURL?.standardizedFileURL == outputURL?.standardizedFileURL
        guard (200..<300).contains(response.statusCode) || alreadyComplete else {
            if let file = exchange.fileURL, file != outputURL, file != partialURL { try? FileManager.default.removeItem(at: file) }
            if outputURL == nil { try? FileManager.default.removeItem(at: partialURL) }
            let status = ExitStatus.checking(statusCode: response.statusCode) ?? .error
            throw FailureReport(
                status: status,
                message: "HTTP \(response.statusCode) \(ExchangePrinter.reasonPhrase(response.statusCode)); nothing saved",
                hint: status == .redirection ? "Add --follow to follow the redirect." : nil)
        }
        if inPlace, exchange.fileURL?.standardizedFileURL != partialURL.standardizedFileURL {
            cleanUpAfterFailure(partialURL: partialURL, outputURL: outputURL, leftover: exchange.fileURL, response: response)
            throw Self.inPlaceRefusal(nil, file: partialURL, statusCode: response.statusCode)
        }
        guard let file = exchange.fileURL, outputURL == nil || file.standardizedFileURL == outputURL?.standardizedFileURL
        else {
            cleanUpAfterFailure(partialURL: partialURL, outputURL: outputURL, leftover: exchange.fileURL, response: response)
            throw FailureReport(status: .error, message: "the download could not be saved to \(output ?? "its file")")
        }
        let size = Self.regularFileSize(file)
        var transferred = size - initialOffset
        if initialOffset > 0 && response.statusCode == 200 {
            transferred = size
            StandardStreams.writeError(
                Data("The server ignored the range request and sent the whole file; it was downloaded again.\n".utf8))
        }
        bar.finish(totalBytes: size, transferredBytes: max(0, transferred))
        StandardStreams.writeError(Data("Saved to \(file.path)\n".utf8))
        return .success
    }

    /// After a failed download: a temporary file (no `-o`, or the library's own) is removed; an
    /// empty `FILE.part`, or one holding a decoded (content-coded) body that can't be resumed
    /// with byte ranges, is removed; a `FILE.part` holding bytes is kept, and stderr says how to
    /// resume it.
    private func cleanUpAfterFailure(partialURL: URL, outputURL: URL?, leftover: URL?, response: HTTPURLResponse?) {
        if let leftover, leftover != partialURL, leftover != outputURL { try? FileManager.default.removeItem(at: leftover) }
        guard outputURL != nil else {
            try? FileManager.default.removeItem(at: partialURL)
            return
        }
        guard partialURL != outputURL else { return }  // the caller's own file, resumed in place
        let coding = response?.value(forHTTPHeaderField: "Content-Encoding")?.trimmingCharacters(in: .whitespaces).lowercased()
        let decoded = coding.map { !$0.isEmpty && $0 != "identity" } ?? false
        let size = Self.regularFileSize(partialURL)
        if size > 0 && !decoded {
            let note = "courier: the partial download (\(size) bytes) is kept in \(partialURL.path); "
                + "run the same command with --continue to resume it\n"
            StandardStreams.writeError(Data(note.utf8))
        } else if case .typeRegular? = Self.fileType(partialURL) {
            try? FileManager.default.removeItem(at: partialURL)
        }
    }

    /// The report for an in-place resume of `file` that was not done, `file` unchanged: the
    /// library refused the response (`error`: a `200` with the whole resource, or a `206` that
    /// doesn't fit), or the server answered with another 2xx than `206` (`error` nil).
    static func inPlaceRefusal(_ error: CourierError?, file: URL, statusCode: Int) -> FailureReport {
        let hint = "Run the same command without --continue to download the whole file again "
            + "(it replaces \(file.path) only once the download is complete)."
        switch (error, statusCode) {
        case (_, 200):
            return FailureReport(
                status: .error,
                message: "the server ignored the range request and answered 200 with the whole file, so \(file.path) "
                    + "can't be resumed; \(file.path) was not changed",
                hint: hint)
        case (let error?, _):
            return FailureReport(status: .error, message: "\(error.description); \(file.path) was not changed")
        case (nil, _):
            return FailureReport(
                status: .error,
                message: "the server answered the range request with \(statusCode) \(ExchangePrinter.reasonPhrase(statusCode)) "
                    + "instead of 206 Partial Content, so \(file.path) can't be resumed; \(file.path) was not changed",
                hint: hint)
        }
    }

    /// What is at `url` without following a symbolic link (nil: nothing).
    static func fileType(_ url: URL) -> FileAttributeType? {
        (try? FileManager.default.attributesOfItem(atPath: url.path))?[.type] as? FileAttributeType
    }

    /// The size of the regular file at `url` (0 when missing or not a regular file).
    static func regularFileSize(_ url: URL) -> Int64 {
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: url.path),
            attributes[.type] as? FileAttributeType == .typeRegular
        else { return 0 }
        return (attributes[.size] as? NSNumber)?.int64Value ?? 0
    }

    /// Why `-o` can't name `url` (nil: a regular file, or nothing yet).
    static func destinationProblem(_ url: URL) -> String? {
        switch fileType(url) {
        case nil:
            var isFolder: ObjCBool = false
            let folder = url.deletingLastPathComponent().path
            guard FileManager.default.fileExists(atPath: folder, isDirectory: &isFolder), isFolder.boolValue else {
                return "its folder \(folder) does not exist"
            }
            return nil
        case .typeRegular?: return nil
        case .typeDirectory?: return "it is a directory"
        case .typeSymbolicLink?: return "it is a symbolic link (name its target instead)"
        default: return "it is not a regular file"
        }
    }

    /// The name from `Content-Disposition: attachment; filename="x"`, else the URL's last path
    /// component, else `index`: one plain file name, as ``DownloadFileName`` makes it.
    static func suggestedFileName(response: HTTPURLResponse, url: URL?) -> String {
        DownloadFileName.name(disposition: response.value(forHTTPHeaderField: "Content-Disposition"), lastPathComponent: url?.lastPathComponent)
    }

    /// `name`, or `name-1`, `name-2`, ... in `directory` (default: the current one), taken at once:
    /// created empty with `O_EXCL`, so that another courier ending at the same moment picks the
    /// next name instead of the same one (the library renames the finished file onto the pick,
    /// replacing a regular file: a pick only checked for existence let the second rename replace
    /// the first download). Never overwrites anything: an existing file, folder or link (even a
    /// dangling one) is skipped. If the folder can't be written, the first free name is returned
    /// uncreated and the move reports the problem.
    static func uniqueURL(for name: String, in directory: URL = URL(fileURLWithPath: FileManager.default.currentDirectoryPath)) -> URL {
        var candidate = directory.appendingPathComponent(name)
        var counter = 1
        while true {
            let descriptor = open(candidate.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOCTTY, 0o644)
            if descriptor >= 0 {
                close(descriptor)
                return candidate
            }
            guard errno == EEXIST else { return candidate }
            candidate = directory.appendingPathComponent("\(name)-\(counter)")
            counter += 1
        }
    }

    /// Removes `url` if it is still an empty regular file (a name picked for a download that was
    /// not moved there).
    static func removeUnusedPlaceholder(_ url: URL) {
        var info = stat()
        guard lstat(url.path, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_size == 0 else { return }
        unlink(url.path)
    }
}
