import Courier
import CourierTestServer
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization
import Testing

/// Every hostile server shape (``HostileCase/all``) against every task kind, through the
/// session layer: each run must end in its typed error within the hang bound, call its
/// completion exactly once, and leave no task, socket, descriptor or temporary file behind.
///
/// Serialized, so that the process's descriptor count means something; with
/// `COURIER_HOSTILE_FD_BASELINE=1` the count must also return to where it was before each run
/// (only meaningful when this suite runs alone: other suites open descriptors meanwhile).
@Suite("Hostile servers", .serialized)
struct HostileServerTests {
    /// How long a run may take to complete before it counts as hung.
    static let hangBound: Double = 30
    static let uploadBytes = 64 << 10

    @Test("a hostile server ends the task in its typed error, once, leaving nothing behind", arguments: HostileRun.matrix(HostileCase.all))
    func hostileServer(_ run: HostileRun) async throws {
        try await Self.check(run)
    }

    @Test("the hostile server counts connections and closes stalled ones on shutdown")
    func serverCountsConnections() async throws {
        let server = try await HostileServer.start(HostileScript([.readHead, .stall]))
        let manager = URLSessionManager()
        let completions = HostileCompletions()
        manager.dataTask(with: URLRequest(url: server.url("/stall")), completionHandler: { _, _, error in completions.record(error) }).resume()
        try await eventually(within: Self.hangBound) { server.requestHeads.count == 1 }
        #expect(server.connectionsAccepted == 1)
        #expect(server.openConnections == 1)
        #expect(server.requestHeads.first?.hasPrefix("GET /stall HTTP/1.1\r\n") == true)
        try await server.shutdown()
        #expect(server.openConnections == 0)
        #expect(await completions.wait(upTo: Self.hangBound))
        manager.invalidateSessionCancelingTasks(true, resetSession: false)
    }

    /// A download whose destination is a directory (`courier -d -o .` once wiped the working
    /// directory): the directory and what it holds survive, the completion runs once, and the
    /// downloaded bytes are not lost in a hidden temporary file the caller can't find.
    @Test("a download onto a directory deletes nothing", arguments: [HostileTaskKind.download, .resumedDownload])
    func downloadOntoADirectory(_ kind: HostileTaskKind) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-hostile-\(UUID().uuidString)")
        let target = directory.appendingPathComponent("target", isDirectory: true)
        try FileManager.default.createDirectory(at: target, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let precious = target.appendingPathComponent("precious.txt")
        try Data("keep me".utf8).write(to: precious)
        let partialFile = directory.appendingPathComponent("partial.bin")
        try Data("01234".utf8).write(to: partialFile)
        let temporaryFilesBefore = HostileLeakProbe.downloadTemporaryFiles()

        try await HostileServer.withRunning(.ok("0123456789")) { server in
            let manager = URLSessionManager()
            let completions = HostileCompletions()
            let fileURL = Mutex<URL?>(nil)
            let handler: @Sendable (HTTPURLResponse?, URL?, (any Error)?) -> Void = { _, url, error in
                fileURL.withLock { $0 = url }
                completions.record(error)
            }
            let task: DownloadTask
            if kind == .resumedDownload {
                let resumeData = DownloadResumeData(request: URLRequest(url: server.url("/file")), partialFileURL: partialFile, validator: "\"v1\"")
                task = manager.downloadTask(withResumeData: resumeData, destination: { _, _ in target }, completionHandler: handler)
            } else {
                task = manager.downloadTask(with: URLRequest(url: server.url("/file")), destination: { _, _ in target }, completionHandler: handler)
            }
            task.resume()
            #expect(await completions.wait(upTo: Self.hangBound), "no completion within \(Self.hangBound) s")
            print("hostile: download onto a directory × \(kind.rawValue) → error: \(completions.error.map { String(reflecting: $0) } ?? "none"), file: \(fileURL.withLock { $0 }?.path ?? "none")")
            #expect(FileManager.default.fileExists(atPath: precious.path), "the directory's content was deleted")
            #expect((try? Data(contentsOf: precious)) == Data("keep me".utf8))
            #expect(fileURL.withLock { $0 }?.standardizedFileURL.path != target.standardizedFileURL.path, "the completion claims the directory is the download")
            try await eventually(within: Self.hangBound) { manager.tasks.isEmpty }
            manager.invalidateSessionCancelingTasks(true, resetSession: false)
            try await eventually(within: Self.hangBound) { server.openConnections == 0 && HostileLeakProbe.clientSockets(toPort: server.port) == 0 }
            #expect(completions.count == 1)
            // What the completion handed over is the caller's; anything else is a leak.
            let handedOver = fileURL.withLock { $0 }?.standardizedFileURL.path
            let leaked = { HostileLeakProbe.downloadTemporaryFiles().subtracting(temporaryFilesBefore).filter { $0 != handedOver } }
            // Other suites' downloads, running beside this one, have temporary files of their own
            // for a moment: a leak is one that stays.
            try await eventually(within: Self.hangBound) { leaked().isEmpty }
            #expect(leaked().isEmpty, "temporary files left behind: \(leaked().sorted())")
            if let handedOver, handedOver != partialFile.standardizedFileURL.path { try? FileManager.default.removeItem(atPath: handedOver) }
        }
    }

    /// A redirect to another origin that asks for credentials (the `--auth-type digest` leak:
    /// `Basic` and the password went to the host reached by redirect): the session credential,
    /// and `Authorization` and `Proxy-Authorization` set on the request, never reach it.
    @Test("credentials stay with their origin across a redirect", arguments: HostileTaskKind.allCases)
    func credentialsStayWithTheirOrigin(_ kind: HostileTaskKind) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-hostile-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let uploadFile = directory.appendingPathComponent("upload.bin")
        try Data(repeating: 0x61, count: 1024).write(to: uploadFile)
        let partialFile = directory.appendingPathComponent("partial.bin")
        try Data("01234".utf8).write(to: partialFile)
        let destination = directory.appendingPathComponent("downloaded.bin")

        let challenge = HostileScript(
            [.readHead, .readBody, .head("401 Unauthorized", ["WWW-Authenticate: Basic realm=\"elsewhere\"", "WWW-Authenticate: Digest realm=\"elsewhere\", nonce=\"abc\"", "Content-Length: 0"])],
            afterwards: .repeatSteps)
        try await HostileServer.withRunning(challenge) { elsewhere in
            let redirect = HostileScript.answer(status: "307 Temporary Redirect", headers: ["Location: \(elsewhere.url("/elsewhere").absoluteString)", "Content-Length: 0"])
            try await HostileServer.withRunning(redirect) { origin in
                let manager = URLSessionManager()
                manager.credential = URLCredential(user: "user", password: "secret-password", persistence: .forSession)
                let completions = HostileCompletions()
                var request = URLRequest(url: origin.url("/start"))
                request.setValue("Basic dXNlcjpzZWNyZXQtcGFzc3dvcmQ=", forHTTPHeaderField: "Authorization")
                request.setValue("Basic cHJveHk6c2VjcmV0", forHTTPHeaderField: "Proxy-Authorization")
                let task: SessionTask
                switch kind {
                case .data:
                    task = manager.dataTask(with: request, completionHandler: { _, _, error in completions.record(error) })
                case .uploadData:
                    request.httpMethod = "POST"
                    task = manager.uploadTask(with: request, from: Data(repeating: 0x62, count: 1024), completionHandler: { _, _, error in completions.record(error) })
                case .uploadFile:
                    request.httpMethod = "POST"
                    task = manager.uploadTask(with: request, fromFile: uploadFile, completionHandler: { _, _, error in completions.record(error) })
                case .download:
                    task = manager.downloadTask(with: request, destination: { _, _ in destination }, completionHandler: { _, _, error in completions.record(error) })
                case .resumedDownload:
                    let resumeData = DownloadResumeData(request: request, partialFileURL: partialFile, validator: "\"v1\"")
                    task = manager.downloadTask(withResumeData: resumeData, destination: { _, _ in destination }, completionHandler: { _, _, error in completions.record(error) })
                }
                task.resume()
                #expect(await completions.wait(upTo: Self.hangBound), "no completion within \(Self.hangBound) s")
                print("hostile: cross-origin 401 × \(kind.rawValue) → \(completions.error.map { String(reflecting: $0) } ?? "success (no error)"); heads elsewhere: \(elsewhere.requestHeads.count)")
                #expect(origin.requestHeads.count == 1)
                #expect(elsewhere.requestHeads.count >= 1, "the redirect was not followed")
                for head in elsewhere.requestHeads {
                    let lowered = head.lowercased()
                    #expect(!lowered.contains("\r\nauthorization:"), "credentials sent to another origin: \(head)")
                    #expect(!lowered.contains("\r\nproxy-authorization:"), "proxy credentials sent to another origin: \(head)")
                }
                try await eventually(within: Self.hangBound) { manager.tasks.isEmpty }
                manager.invalidateSessionCancelingTasks(true, resetSession: false)
                try await eventually(within: Self.hangBound) {
                    origin.openConnections == 0 && elsewhere.openConnections == 0
                        && HostileLeakProbe.clientSockets(toPort: origin.port) == 0 && HostileLeakProbe.clientSockets(toPort: elsewhere.port) == 0
                }
                #expect(completions.count == 1)
                if let kept = (task as? DownloadTask)?.resumeData?.partialFileURL, kept.standardizedFileURL.path != partialFile.standardizedFileURL.path {
                    try? FileManager.default.removeItem(at: kept)
                }
            }
        }
    }

    /// One well-behaved exchange through a manager that is then invalidated, with every socket closed.
    static func warmUp() async throws {
        try await HostileServer.withRunning(.ok()) { server in
            let manager = URLSessionManager()
            let completions = HostileCompletions()
            manager.dataTask(with: URLRequest(url: server.url("/warm-up")), completionHandler: { _, _, error in completions.record(error) }).resume()
            _ = await completions.wait(upTo: hangBound)
            manager.invalidateSessionCancelingTasks(true, resetSession: false)
            try await eventually(within: hangBound) { server.openConnections == 0 && HostileLeakProbe.clientSockets(toPort: server.port) == 0 }
        }
    }

    static func check(_ run: HostileRun) async throws {
        let hostileCase = run.hostileCase
        let label = run.testDescription
        let strictDescriptors = ProcessInfo.processInfo.environment["COURIER_HOSTILE_FD_BASELINE"] == "1"
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-hostile-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let uploadFile = directory.appendingPathComponent("upload.bin")
        try Data(repeating: 0x61, count: uploadBytes).write(to: uploadFile)
        let partialFile = directory.appendingPathComponent("partial.bin")
        try Data("01234".utf8).write(to: partialFile)
        let destination = directory.appendingPathComponent("downloaded.bin")

        // Whatever the first exchange of a process creates for good (event loop threads, the
        // engine's thread pool) must be in the baseline.
        if strictDescriptors { try await warmUp() }
        let descriptorsBefore = HostileLeakProbe.openDescriptorCount()
        let temporaryFilesBefore = HostileLeakProbe.downloadTemporaryFiles()

        let server = try await HostileServer.start(hostileCase.script, tls: hostileCase.tls)
        var configuration = SessionConfiguration()
        configuration.timeoutIntervalForRequest = hostileCase.requestTimeout
        if let limit = hostileCase.maximumResponseBodySize { configuration.maximumResponseBodySize = limit }
        if hostileCase.tls != nil {
            configuration.tls.additionalTrustRootsDER = [try TestCertificateAuthority.shared.rootCertificateDER]
        }
        let manager = URLSessionManager(configuration: configuration)
        manager.responseSerializer = HTTPResponseSerializer()
        let completions = HostileCompletions()
        let url = hostileCase.httpsToPlainServer ? URL(string: "https://127.0.0.1:\(server.port)/hostile") ?? server.url("/hostile") : server.url("/hostile")

        let task: SessionTask
        switch run.kind {
        case .data:
            task = manager.dataTask(with: URLRequest(url: url), completionHandler: { _, _, error in completions.record(error) })
        case .uploadData:
            var request = URLRequest(url: url)
            request.httpMethod = "POST"
            task = manager.uploadTask(with: request, from: Data(repeating: 0x62, count: uploadBytes), completionHandler: { _, _, error in completions.record(error) })
        case .uploadFile:
            var request = URLRequest(url: url)
            request.httpMethod = "POST"
            task = manager.uploadTask(with: request, fromFile: uploadFile, completionHandler: { _, _, error in completions.record(error) })
        case .download:
            task = manager.downloadTask(with: URLRequest(url: url), destination: { _, _ in destination }) { _, _, error in
                completions.record(error)
            }
        case .resumedDownload:
            let resumeData = DownloadResumeData(request: URLRequest(url: url), partialFileURL: partialFile, validator: "\"v1\"")
            task = manager.downloadTask(withResumeData: resumeData, destination: { _, _ in destination }) { _, _, error in
                completions.record(error)
            }
        }
        task.resume()

        let finished = await completions.wait(upTo: hangBound)
        if !finished {
            Issue.record("\(label): no completion within \(hangBound) s (hung)")
            task.cancel()
            _ = await completions.wait(upTo: hangBound)
        }
        let error = completions.error
        let expected = hostileCase.expectation(for: run.kind)
        let outcome = error.map { String(reflecting: $0) } ?? "success (no error)"
        print("hostile: \(label) → \(outcome)")
        if finished && !expected.matches(error) {
            Issue.record("\(label): expected \(expected), got \(outcome)")
        }

        // No leaked task: the manager forgets a task before its completion runs.
        try await eventually(within: hangBound) { manager.tasks.isEmpty }
        if !manager.tasks.isEmpty { Issue.record("\(label): tasks left in the manager: \(manager.tasks)") }

        // No leaked socket: closing the pool's idle connections closes every connection.
        manager.invalidateSessionCancelingTasks(true, resetSession: false)
        try await eventually(within: hangBound) { server.openConnections == 0 && HostileLeakProbe.clientSockets(toPort: server.port) == 0 }
        if server.openConnections != 0 { Issue.record("\(label): the server still has \(server.openConnections) open connection(s)") }
        let clientSockets = HostileLeakProbe.clientSockets(toPort: server.port)
        if clientSockets != 0 { Issue.record("\(label): \(clientSockets) client socket(s) to the server still open") }
        try await server.shutdown()

        // No leaked temporary file. A failed download may keep its bytes as resume data (as
        // URLSession does); that file is the caller's to resume or delete.
        // Only download tasks write such files; other processes' downloads share the directory,
        // so a file of theirs can pass by but not stay.
        let keptForResume = (task as? DownloadTask)?.resumeData.map { $0.partialFileURL.standardizedFileURL.path }
        func leaked() -> Set<String> {
            guard run.kind.isDownload else { return [] }
            return HostileLeakProbe.downloadTemporaryFiles().subtracting(temporaryFilesBefore).filter { $0 != keptForResume }
        }
        try await eventually(within: hangBound) { leaked().isEmpty }
        let leakedFiles = leaked()
        if !leakedFiles.isEmpty { Issue.record("\(label): temporary files left behind: \(leakedFiles.sorted()) (kept as resume data: \(keptForResume ?? "none"))") }
        if let keptForResume, keptForResume != partialFile.standardizedFileURL.path {
            try? FileManager.default.removeItem(atPath: keptForResume)
        }
        // A status failure still delivers the body to the destination, as in AFNetworking (the
        // serializer's verdict comes after the move); a transport failure must not.
        var isStatusFailure = false
        if case .unacceptableStatusCode = error as? CourierError { isStatusFailure = true }
        if FileManager.default.fileExists(atPath: destination.path) && error != nil && !isStatusFailure {
            Issue.record("\(label): a failed download left a file at its destination")
        }

        // Exactly one completion (checked after the invalidation, which cancels what is left).
        #expect(completions.count == 1, "\(label): completion called \(completions.count) times")

        let descriptorsAfter = HostileLeakProbe.openDescriptorCount()
        if strictDescriptors {
            try await eventually(within: hangBound) { HostileLeakProbe.openDescriptorCount() <= descriptorsBefore }
            let now = HostileLeakProbe.openDescriptorCount()
            if now > descriptorsBefore { Issue.record("\(label): \(now - descriptorsBefore) descriptor(s) more than before the run") }
        } else if descriptorsAfter > descriptorsBefore {
            print("\(label): \(descriptorsAfter - descriptorsBefore) descriptor(s) more than before (not checked: other suites may be running)")
        }
    }
}
