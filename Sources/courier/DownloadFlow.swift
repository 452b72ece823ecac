import Courier
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

/// `--download`: the body goes to a file (named by `-o`, the `Content-Disposition` header or
/// the URL), progress and the response head go to stderr; `--continue` resumes a partial file
/// through `DownloadResumeData`.
struct DownloadFlow {
    var manager: URLSessionManager
    var request: URLRequest
    var output: String?
    var resume: Bool
    var printHeaders: Bool

    /// Runs the download; returns the exit status (errors from the transfer are thrown).
    func run() async throws -> ExitStatus {
        let outputURL = output.map { URL(fileURLWithPath: $0) }
        var resumeData: DownloadResumeData?
        if resume, let outputURL {
            let partial = DownloadResumeData(request: request, partialFileURL: outputURL)
            if partial.offset > 0 {
                resumeData = partial
                FileHandle.standardError.write(
                    Data("Resuming \(outputURL.path) from byte \(partial.offset)\n".utf8))
            }
        }
        let initialOffset = resumeData?.offset ?? 0  // read now: the file grows as the download runs
        let bar = DownloadProgressBar(initialBytes: initialOffset)
        let requestURL = request.url
        let exchange = await ExchangeRunner.download(
            request, resumeData: resumeData, with: manager,
            progress: { done, total in bar.update(done: done, total: total) },
            destination: { temporary, response in
                guard (200..<300).contains(response.statusCode) else { return temporary }
                if let outputURL { return outputURL }
                return Self.uniqueURL(for: Self.suggestedFileName(response: response, url: requestURL))
            })
        if let error = exchange.error { throw error }
        guard let response = exchange.response else {
            throw FailureReport(status: .error, message: "no response")
        }
        if printHeaders {
            let head = ExchangePrinter(options: OutputOptions(isTerminal: isatty(STDERR_FILENO) == 1)).responseHead(response)
            FileHandle.standardError.write(Data(head.utf8))
        }
        guard (200..<300).contains(response.statusCode) else {
            if let file = exchange.fileURL, file != outputURL { try? FileManager.default.removeItem(at: file) }
            let status = ExitStatus.checking(statusCode: response.statusCode) ?? .error
            throw FailureReport(
                status: status,
                message: "HTTP \(response.statusCode) \(ExchangePrinter.reasonPhrase(response.statusCode)); nothing saved",
                hint: status == .redirection ? "Add --follow to follow the redirect." : nil)
        }
        guard let file = exchange.fileURL, outputURL == nil || file.standardizedFileURL == outputURL?.standardizedFileURL
        else {
            throw FailureReport(status: .error, message: "the download could not be saved to \(output ?? "its file")")
        }
        let size = (try? FileManager.default.attributesOfItem(atPath: file.path)[.size] as? NSNumber)?.int64Value ?? 0
        var transferred = size - initialOffset
        if resumeData != nil && response.statusCode == 200 {
            transferred = size
            FileHandle.standardError.write(
                Data("The server ignored the range request and sent the whole file; it was downloaded again.\n".utf8))
        }
        bar.finish(totalBytes: size, transferredBytes: transferred)
        FileHandle.standardError.write(Data("Saved to \(file.path)\n".utf8))
        return .success
    }

    /// The name from `Content-Disposition: attachment; filename="x"`, else the URL's last path
    /// component, else `index`. Never a path: only the last component is kept.
    static func suggestedFileName(response: HTTPURLResponse, url: URL?) -> String {
        if let disposition = response.value(forHTTPHeaderField: "Content-Disposition"),
            let range = disposition.range(of: "filename=")
        {
            var name = String(disposition[range.upperBound...])
            if let end = name.firstIndex(of: ";") { name = String(name[..<end]) }
            name = name.trimmingCharacters(in: CharacterSet(charactersIn: "\" "))
            let safe = URL(fileURLWithPath: name).lastPathComponent
            if !safe.isEmpty, safe != "/", safe != "..", safe != "." { return safe }
        }
        let last = url?.lastPathComponent ?? ""
        return last.isEmpty || last == "/" ? "index" : last
    }

    /// `name`, or `name-1`, `name-2`, ... in the current directory: never overwrites a file.
    static func uniqueURL(for name: String) -> URL {
        let directory = URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
        var candidate = directory.appendingPathComponent(name)
        var counter = 1
        while FileManager.default.fileExists(atPath: candidate.path) {
            candidate = directory.appendingPathComponent("\(name)-\(counter)")
            counter += 1
        }
        return candidate
    }
}
