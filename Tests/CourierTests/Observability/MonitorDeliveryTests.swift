@testable import Courier
import CourierEngine
import CourierTestServer
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NIOPosix
import Synchronization
import Testing

/// Records each task's events in arrival order, with the instant each arrived, whether one
/// arrived on an event loop, and whether two of one task's calls ever overlapped.
private final class PerTaskRecorder: SessionEventMonitor {
    struct Arrival: Sendable {
        var name: String
        var arrived: Date
    }
    private struct State {
        var byTask: [Int: [Arrival]] = [:]
        var inside: Set<Int> = []
        var overlapped = false
        var onLoop = 0
        var callEnds = 0
        var completions = 0
    }
    private let state = Mutex(State())
    /// Blocks the monitor queue this many seconds on `responseHeadersEnd` (a slow monitor).
    private let headDelay: TimeInterval

    init(headDelay: TimeInterval = 0) {
        self.headDelay = headDelay
    }

    func task(_ task: SessionTask, didReceive event: TaskEvent) {
        if event.kind.name == "responseHeadersEnd", headDelay > 0 { Thread.sleep(forTimeInterval: headDelay) }
        let id = task.taskIdentifier
        state.withLock { state in
            if !state.inside.insert(id).inserted { state.overlapped = true }
            if MultiThreadedEventLoopGroup.currentEventLoop != nil { state.onLoop += 1 }
        }
        state.withLock { state in
            state.byTask[id, default: []].append(Arrival(name: event.kind.name, arrived: Date()))
            if event.kind.name == "callEnd" { state.callEnds += 1 }
            state.inside.remove(id)
        }
    }

    func taskDidComplete(_ task: SessionTask, response: HTTPURLResponse?, responseObject: (any Sendable)?, error: (any Error)?) {
        state.withLock { $0.completions += 1 }
    }

    var byTask: [Int: [Arrival]] { state.withLock { $0.byTask } }
    var overlapped: Bool { state.withLock { $0.overlapped } }
    var arrivedOnAnEventLoop: Int { state.withLock { $0.onLoop } }
    var callEnds: Int { state.withLock { $0.callEnds } }
    var completions: Int { state.withLock { $0.completions } }
    func arrival(of name: String) -> Date? { state.withLock { $0.byTask.values.joined().first { $0.name == name }?.arrived } }
}

private final class Counts: Sendable {
    let returned = Atomic<Int>(0)
    let heardBeforeReturning = Atomic<Int>(0)
}

@Suite("Event monitor delivery")
struct MonitorDeliveryTests {
    /// The order one small GET's events must keep, whatever else runs beside it.
    private static let smallGET = [
        "callStart", "connectionWaitStart", "connectionWaitEnd", "connectionAcquired",
        "requestHeadersStart", "requestHeadersEnd", "responseHeadersStart", "responseHeadersEnd",
        "responseBodyStart", "responseBodyEnd", "connectionReleased", "callEnd",
    ]

    /// A manager that takes any body as data, with `recorder` attached.
    private static func manager(_ recorder: PerTaskRecorder) -> URLSessionManager {
        let manager = URLSessionManager()
        manager.responseSerializer = HTTPResponseSerializer()
        manager.addEventMonitor(recorder)
        return manager
    }

    /// `/drip`: the head and the first of `bytes` bytes at once, the rest spread over `seconds`.
    private static func drip(_ server: TestServer, bytes: Int, over seconds: String) -> URLRequest {
        URLRequest(url: server.baseURL.appending(path: "drip").appending(queryItems: [
            URLQueryItem(name: "numbytes", value: String(bytes)), URLQueryItem(name: "duration", value: seconds),
        ]))
    }

    @Test func sixtyFourCallsAtOnceEachHearTheirOwnEventsInOrderBeforeTheyReturn() async throws {
        try await TestServer.withRunning { server in
            let recorder = PerTaskRecorder()
            var configuration = SessionConfiguration()
            configuration.httpMaximumConnectionsPerHost = 8
            let manager = URLSessionManager(configuration: configuration)
            manager.addEventMonitor(recorder)
            defer { manager.invalidateSessionCancelingTasks(true, resetSession: false) }
            let url = server.baseURL.appending(path: "json")
            _ = try await manager.data(for: URLRequest(url: url))  // the 8 connections' setup is not what this checks
            let counts = Counts()
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<64 {
                    group.addTask {
                        for _ in 0..<8 {
                            let (_, response) = try await manager.data(for: URLRequest(url: url))
                            #expect(response.statusCode == 200)
                            // Every call that returned so far (this one included) was heard to its end.
                            let count = counts.returned.add(1, ordering: .sequentiallyConsistent).newValue
                            if recorder.callEnds >= count && recorder.completions >= count {
                                counts.heardBeforeReturning.add(1, ordering: .relaxed)
                            }
                        }
                    }
                }
                try await group.waitForAll()
            }
            #expect(counts.heardBeforeReturning.load(ordering: .relaxed) == 512, "each call returns after its monitors heard callEnd and taskDidComplete")
            #expect(recorder.arrivedOnAnEventLoop == 0)
            #expect(!recorder.overlapped, "one task's calls come one at a time")
            let tasks = recorder.byTask
            #expect(tasks.count == 513)
            for (_, arrivals) in tasks {
                let names = arrivals.map(\.name)
                // A new connection's setup may sit between the wait's start and end.
                let withoutSetup = names.filter { !$0.hasPrefix("connect") || $0.hasPrefix("connection") }
                #expect(withoutSetup == Self.smallGET, "\(names)")
                let instants = arrivals.map(\.arrived)
                #expect(instants == instants.sorted())
            }
        }
    }

    @Test(arguments: [false, true])
    func aResponseHeadIsHeardWhileItsBodyIsStillComing(completionHandler: Bool) async throws {
        try await TestServer.withRunning { server in
            let recorder = PerTaskRecorder()
            let manager = Self.manager(recorder)
            defer { manager.invalidateSessionCancelingTasks(true, resetSession: false) }
            // The head and the first byte now, the last of 4 bytes 3 s later.
            let request = Self.drip(server, bytes: 4, over: "4")
            if completionHandler {
                let status: Int? = await withCheckedContinuation { continuation in
                    manager.dataTask(with: request, completionHandler: { response, _, _ in
                        continuation.resume(returning: response?.statusCode)
                    }).resume()
                }
                #expect(status == 200)
            } else {
                let (_, response) = try await manager.data(for: request)
                #expect(response.statusCode == 200)
            }
            let heardHead = try #require(recorder.arrival(of: "responseHeadersEnd"))
            let heardBodyEnd = try #require(recorder.arrival(of: "responseBodyEnd"))
            // Seconds apart: the head was told as it came, not with the end of the body.
            #expect(heardBodyEnd.timeIntervalSince(heardHead) > 1.5)
        }
    }

    @Test(arguments: [false, true])
    func aSlowMonitorHasHeardEverythingWhenTheCallEnds(completionHandler: Bool) async throws {
        try await TestServer.withRunning { server in
            // The monitor is still busy with the head when the body's last byte comes.
            let recorder = PerTaskRecorder(headDelay: 0.6)
            let manager = Self.manager(recorder)
            defer { manager.invalidateSessionCancelingTasks(true, resetSession: false) }
            let request = Self.drip(server, bytes: 2, over: "0.2")
            if completionHandler {
                let heard: [String] = await withCheckedContinuation { continuation in
                    manager.dataTask(with: request, completionHandler: { _, _, _ in
                        continuation.resume(returning: recorder.byTask.values.first?.map(\.name) ?? [])
                    }).resume()
                }
                #expect(heard.last == "callEnd", "the completion handler runs after the monitors heard the call's end: \(heard)")
            } else {
                _ = try await manager.data(for: request)
                #expect(recorder.completions == 1)
            }
            let names = try #require(recorder.byTask.values.first).map(\.name)
            #expect(names.first == "callStart")
            #expect(names.last == "callEnd", "\(names)")
            #expect(names.firstIndex(of: "responseHeadersEnd").map { $0 < names.count - 4 } == true)
            #expect(!recorder.overlapped)
        }
    }
}
