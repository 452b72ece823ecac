import CourierEngine
import CourierTestServer
import Foundation
import NIOCore
import NIOHTTP1
import Synchronization

/// Starts a test server and an engine, runs `body`, then shuts both down (also on failure).
func withEngine<T>(
    server configuration: TestServer.Configuration = .init(),
    engine engineConfiguration: EngineConfiguration = .init(),
    _ body: (HTTPEngine, TestServer) async throws -> T
) async throws -> T {
    let server = try await TestServer.start(configuration)
    let engine = try HTTPEngine(configuration: engineConfiguration)
    do {
        let result = try await body(engine, server)
        await engine.shutdown()
        try await server.shutdown()
        return result
    } catch {
        await engine.shutdown()
        try? await server.shutdown()
        throw error
    }
}

extension TestServer {
    /// A URL on this server for `pathAndQuery` (which starts with `/`).
    func url(_ pathAndQuery: String) -> URL {
        guard let url = URL(string: baseURL.absoluteString + pathAndQuery) else {
            preconditionFailure("bad test URL \(pathAndQuery)")
        }
        return url
    }
}

extension CollectedResponse {
    /// The body parsed as a JSON object.
    func json() throws -> [String: Any] {
        let data = Data(body.readableBytesView)
        guard let object = try JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw EngineTestFailure("body is not a JSON object: \(String(decoding: data, as: UTF8.self))")
        }
        return object
    }

    var text: String { String(decoding: body.readableBytesView, as: UTF8.self) }
}

struct EngineTestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// The error a request ended with, or nil when it succeeded.
func engineError(_ operation: () async throws -> Void) async -> EngineError? {
    do {
        try await operation()
        return nil
    } catch let error as EngineError {
        return error
    } catch {
        return .protocolViolation("not an EngineError: \(error)")
    }
}

/// TCP sockets this process holds open towards `port` on loopback, found by matching the
/// socket inodes of `/proc/self/fd` with `/proc/net/tcp{,6}`. Unlike a plain fd count, other
/// tests running in parallel don't disturb it.
func openClientSockets(toPort port: Int) -> Int {
    let fdDirectory = "/proc/self/fd"
    guard let entries = try? FileManager.default.contentsOfDirectory(atPath: fdDirectory) else { return -1 }
    var inodes = Set<String>()
    for entry in entries {
        if let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "\(fdDirectory)/\(entry)"),
            target.hasPrefix("socket:[")
        {
            inodes.insert(String(target.dropFirst(8).dropLast()))
        }
    }
    let portHex = String(format: "%04X", port)
    var count = 0
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        guard let text = try? String(contentsOfFile: table, encoding: .utf8) else { continue }
        for line in text.split(separator: "\n").dropFirst() {
            let fields = line.split(separator: " ")
            // fields: sl local_address rem_address st ... inode (index 9)
            guard fields.count > 9 else { continue }
            let remote = fields[2]
            let state = fields[3]
            // 0A is LISTEN; TIME_WAIT (06) sockets have no fd and inode 0.
            guard remote.hasSuffix(":" + portHex), state != "0A" else { continue }
            if inodes.contains(String(fields[9])) { count += 1 }
        }
    }
    return count
}

/// Records every event of one request, in order.
final class EventRecorder: Sendable {
    private let events = Mutex<[EngineEvent]>([])
    let done = Mutex<CheckedContinuation<Void, Never>?>(nil)

    func record(_ event: EngineEvent) {
        events.withLock { $0.append(event) }
        if event.isTerminal {
            done.withLock { continuation in
                continuation?.resume()
                continuation = nil
            }
        }
    }

    var all: [EngineEvent] { events.withLock { $0 } }
    var terminalCount: Int { all.filter(\.isTerminal).count }

    /// Waits for the terminal event.
    func waitForEnd() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let finished = events.withLock { $0.contains(where: \.isTerminal) }
            if finished {
                continuation.resume()
            } else {
                done.withLock { $0 = continuation }
                // The end may have arrived between the check and storing the continuation.
                if events.withLock({ $0.contains(where: \.isTerminal) }) {
                    done.withLock { stored in
                        stored?.resume()
                        stored = nil
                    }
                }
            }
        }
    }

    var failure: EngineError? {
        for event in all {
            if case .failed(let error, _) = event { return error }
        }
        return nil
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

    /// A test's own guard timeout (one it does not expect to fire), stretched by ``scale``.
    static func amount(seconds: Int64) -> TimeAmount { .milliseconds(Int64((Double(seconds) * 1_000 * scale).rounded())) }
}

/// Polls `condition` every 20 ms for up to `seconds` (times ``TestTimeouts/scale``); returns its
/// last value. For effects that happen asynchronously (a socket closing) on a machine that may be busy.
func eventually(within seconds: Double = 20, _ condition: () -> Bool) async -> Bool {
    let deadline = Date().addingTimeInterval(TestTimeouts.seconds(seconds))
    while Date() < deadline {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(20))
    }
    return condition()
}
