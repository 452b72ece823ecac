import Courier
import CourierTestServer
import Dispatch
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization
import Testing

/// Holds every reader until opened; counts the reads that reached it.
private final class Gate: @unchecked Sendable {
    // @unchecked: every field is touched only with `condition` locked.
    private let condition = NSCondition()
    private var isOpen = false
    private var arrived = 0

    func passThrough() {
        condition.lock()
        arrived += 1
        condition.broadcast()
        while !isOpen { condition.wait() }
        condition.unlock()
    }

    func open() {
        condition.lock()
        isOpen = true
        condition.broadcast()
        condition.unlock()
    }

    /// Waits until `count` readers arrived, or `seconds` passed (a hang bound).
    func waitForArrivals(_ count: Int, seconds: Double) {
        let deadline = Date().addingTimeInterval(seconds)
        condition.lock()
        while arrived < count, condition.wait(until: deadline) {}
        condition.unlock()
    }
}

/// An input stream whose first read blocks until its gate opens (a pipe whose writer is late).
private final class GatedInputStream: InputStream {
    private let gate: Gate
    private var remaining: Data
    private var status: Stream.Status = .notOpen

    init(_ body: Data, gate: Gate) {
        self.gate = gate
        self.remaining = body
        super.init(data: Data())
    }

    override func open() { status = .open }
    override func close() { status = .closed }
    override var streamStatus: Stream.Status { status }
    override var streamError: (any Error)? { nil }
    override var hasBytesAvailable: Bool { status == .open && !remaining.isEmpty }

    override func getBuffer(
        _ buffer: UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>, length len: UnsafeMutablePointer<Int>
    ) -> Bool {
        false
    }

    override func read(_ buffer: UnsafeMutablePointer<UInt8>, maxLength len: Int) -> Int {
        gate.passThrough()
        let count = min(len, remaining.count)
        remaining.copyBytes(to: buffer, count: count)
        remaining = Data(remaining.dropFirst(count))
        return count
    }
}

/// Request bodies read from streams and files, and throttled multipart bodies, never block
/// Swift's cooperative thread pool: other Swift tasks keep running while they wait.
@Suite("Blocking I/O off the cooperative pool")
struct BlockingIOTests {
    /// More uploads than the cooperative pool has threads (Linux's dispatch may add a few).
    private static let uploads = max(8, ProcessInfo.processInfo.activeProcessorCount * 4)

    private static func configuration() -> SessionConfiguration {
        var configuration = SessionConfiguration()
        configuration.httpMaximumConnectionsPerHost = uploads
        return configuration
    }

    /// Starts `uploads` uploads whose body streams block on a gate; once every read is
    /// waiting (or a hang bound passed), starts an unrelated Swift task, then opens the gate
    /// (when that task ran, or after a hang bound). Returns whether the unrelated task ran
    /// while the reads were still blocked.
    private static func unrelatedTaskRunsWhileReadsBlock(
        start: (_ body: GatedInputStream, _ done: CompletionRecorder) -> Void
    ) async throws -> Bool {
        let gate = Gate()
        let recorders = (0..<uploads).map { _ in CompletionRecorder() }
        for recorder in recorders {
            start(GatedInputStream(Data(repeating: 0x61, count: 1000), gate: gate), recorder)
        }
        let ranFirst = Mutex(false)
        let released = DispatchSemaphore(value: 0)
        // A plain thread, not a Swift task: it must make progress when the pool is stuck.
        let supervisor = Thread {
            gate.waitForArrivals(uploads, seconds: 15)
            let ran = DispatchSemaphore(value: 0)
            Task { ran.signal() }
            let inTime = ran.wait(timeout: .now() + 15) == .success
            ranFirst.withLock { $0 = inTime }
            gate.open()
            released.signal()
        }
        supervisor.start()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().async {
                released.wait()
                continuation.resume()
            }
        }
        for recorder in recorders {
            await recorder.wait()
            #expect(recorder.first?.error == nil)
        }
        return ranFirst.withLock { $0 }
    }

    @Test func inputStreamBodiesLeaveThePoolFree() async throws {
        try await TestServer.withRunning { server in
            let manager = URLSessionManager(configuration: Self.configuration())
            let ran = try await Self.unrelatedTaskRunsWhileReadsBlock { body, done in
                var request = URLRequest(url: server.sessionURL("/upload"))
                request.httpMethod = "POST"
                request.httpBodyStream = body
                request.setValue("1000", forHTTPHeaderField: "Content-Length")
                manager.uploadTask(withStreamedRequest: request, completionHandler: done.handler).resume()
            }
            #expect(ran, "a Swift task could not run while stream bodies waited for data")
        }
    }

    @Test func multipartStreamPartsLeaveThePoolFree() async throws {
        try await TestServer.withRunning { server in
            let manager = HTTPSessionManager(baseURL: server.baseURL, configuration: Self.configuration())
            let ran = try await Self.unrelatedTaskRunsWhileReadsBlock { body, done in
                let box = UnsafeSendableBox(body)
                manager.post(
                    "upload", parameters: nil, headers: nil,
                    constructingBody: { form in
                        form.appendPart(
                            inputStream: box.take(), name: "part", fileName: "part.bin", length: 1000,
                            mimeType: "application/octet-stream")
                    }, progress: nil, success: { _, object in done.handler(nil, object, nil) },
                    failure: { _, error in done.handler(nil, nil, error) })
            }
            #expect(ran, "a Swift task could not run while multipart stream parts waited for data")
        }
    }

    /// Throttled `InputStream` bodies (AFN's `throttleBandwidth`) pause between packets
    /// without holding a thread: an unrelated task that yields many times (going to the back
    /// of the pool's queue each time) finishes before any throttled upload does.
    @Test func throttledMultipartStreamsLeaveThePoolFree() async throws {
        try await TestServer.withRunning { server in
            let manager = URLSessionManager(configuration: Self.configuration())
            let form = MultipartFormData()
            // 16 packets 0.5 s apart: each upload takes 8 s, so a loaded machine's scheduling
            // noise can't let the uploads finish first; a blocking sleep holds a pool thread for
            // each 0.5 s pause, and 200 yields queued behind those take far longer than 8 s.
            form.appendPart(fileData: Data(repeating: 0x62, count: 16_384), name: "f", fileName: "f.bin", mimeType: "application/octet-stream")
            form.throttleBandwidth(packetSize: 1024, delay: 0.5)
            let finished = Mutex(0)
            let recorders = (0..<Self.uploads).map { _ in CompletionRecorder() }
            for recorder in recorders {
                var request = URLRequest(url: server.sessionURL("/upload"))
                request.httpMethod = "POST"
                request.httpBodyStream = form.makeInputStream()
                request.setValue(String(form.contentLength), forHTTPHeaderField: "Content-Length")
                manager.uploadTask(
                    withStreamedRequest: request,
                    completionHandler: { response, object, error in
                        finished.withLock { $0 += 1 }
                        recorder.handler(response, object, error)
                    }
                ).resume()
            }
            // Default priority: a low-priority task was starved past the uploads' end by the
            // other suites of a full parallel run on 2 cores.
            let finishedWhenDone = await Task.detached {
                for _ in 0..<200 { await Task.yield() }
                return finished.withLock { $0 }
            }.value
            for recorder in recorders {
                await recorder.wait()
                #expect(recorder.first?.error == nil)
            }
            #expect(finishedWhenDone == 0, "\(finishedWhenDone) throttled uploads finished before a yielding task did")
        }
    }
}

/// Hands a non-Sendable value to one `sending` consumer.
private final class UnsafeSendableBox<Value>: @unchecked Sendable {
    // @unchecked: the value is taken once, by the one closure that runs synchronously.
    private var value: Value?

    init(_ value: Value) { self.value = value }

    func take() -> Value {
        guard let value else { preconditionFailure("taken twice") }
        self.value = nil
        return value
    }
}
