import Courier
import CourierTestServer
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization
import Testing

/// What one task's completion delivered, and how many times it was called.
final class CompletionRecorder: Sendable {
    struct Call: @unchecked Sendable {
        // @unchecked: the values are only read after the completion ran, from the test.
        var response: HTTPURLResponse?
        var object: (any Sendable)?
        var error: (any Error)?
    }

    private let calls = Mutex<[Call]>([])
    private let waiter = Mutex<CheckedContinuation<Void, Never>?>(nil)

    var handler: @Sendable (HTTPURLResponse?, (any Sendable)?, (any Error)?) -> Void {
        { response, object, error in
            self.calls.withLock { $0.append(Call(response: response, object: object, error: error)) }
            self.waiter.withLock { continuation in
                continuation?.resume()
                continuation = nil
            }
        }
    }

    /// ``handler`` for a download's completion: the file URL is recorded as the object.
    var downloadHandler: @Sendable (HTTPURLResponse?, URL?, (any Error)?) -> Void {
        let handler = self.handler
        return { response, url, error in handler(response, url, error) }
    }

    var all: [Call] { calls.withLock { $0 } }
    var first: Call? { all.first }
    /// The file URL the first download completion was given (see ``downloadHandler``).
    var firstFileURL: URL? { first?.object as? URL }

    func wait() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let done = calls.withLock { !$0.isEmpty }
            if done {
                continuation.resume()
                return
            }
            waiter.withLock { $0 = continuation }
            if calls.withLock({ !$0.isEmpty }) {
                waiter.withLock { stored in
                    stored?.resume()
                    stored = nil
                }
            }
        }
    }
}

/// How `request` failed when sent on `manager` in each of AFNetworking's two task shapes:
/// awaited (`data(for:)`) and with a completion block (`dataTask(with:completionHandler:)`),
/// each labelled with its shape's name; nil where it succeeded.
func failuresOnBothTaskShapes(of request: URLRequest, on manager: URLSessionManager) async -> [(shape: String, error: (any Error)?)] {
    var failures: [(shape: String, error: (any Error)?)] = []
    do {
        _ = try await manager.data(for: request)
        failures.append(("awaited", nil))
    } catch {
        failures.append(("awaited", error))
    }
    let recorder = CompletionRecorder()
    manager.dataTask(with: request, completionHandler: recorder.handler).resume()
    await recorder.wait()
    failures.append(("block", recorder.first?.error))
    return failures
}

extension TestServer {
    func sessionURL(_ pathAndQuery: String) -> URL {
        guard let url = URL(string: baseURL.absoluteString + pathAndQuery) else {
            preconditionFailure("bad URL \(pathAndQuery)")
        }
        return url
    }
}

/// How much longer than written the tests' hang bounds (how long a test waits before it gives
/// up) are: `COURIER_TEST_TIMEOUT_SCALE`, for slow runs (scripts/tsan.sh sets it: ThreadSanitizer
/// runs 5-15x slower); 1 when unset. What a test asserts does not change, only how long it waits.
enum TestTimeouts {
    static let scale: Double = ProcessInfo.processInfo.environment["COURIER_TEST_TIMEOUT_SCALE"]
        .flatMap(Double.init).map { $0.isFinite ? max(1, $0) : 1 } ?? 1

    /// `seconds` stretched by ``scale``.
    static func seconds(_ seconds: Double) -> Double { seconds * scale }
}

/// Polls `condition` every 20 ms for up to `seconds` (a hang bound, generous for a 2-core
/// machine running every suite at once; times ``TestTimeouts/scale``); records a failure when it never holds.
func eventually(within seconds: Double = 60, _ condition: () -> Bool) async throws {
    let deadline = Date().addingTimeInterval(TestTimeouts.seconds(seconds))
    while Date() < deadline {
        if condition() { return }
        try await Task.sleep(for: .milliseconds(20))
    }
    if !condition() { Issue.record("condition not met within \(TestTimeouts.seconds(seconds)) s") }
}

/// Waits until `value` has stayed the same for `interval` (work already in flight when a transfer
/// was paused lands late on a loaded machine) and returns it; gives up after `seconds` (times
/// ``TestTimeouts/scale``).
func settled(within seconds: Double = 30, interval: Duration = .milliseconds(300), _ value: () -> Int64) async throws -> Int64 {
    let deadline = Date().addingTimeInterval(TestTimeouts.seconds(seconds))
    var last = value()
    while Date() < deadline {
        try await Task.sleep(for: interval)
        let now = value()
        if now == last { return now }
        last = now
    }
    Issue.record("the value kept changing for \(TestTimeouts.seconds(seconds)) s")
    return last
}
