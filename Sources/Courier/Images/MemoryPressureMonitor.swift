import CourierEngine
import Dispatch
public import Foundation
import Synchronization

/// Watches Linux's memory-pressure signals and tells its handlers (``AutoPurgingImageCache``
/// registers itself), the Linux stand-in for `UIApplicationDidReceiveMemoryWarningNotification`.
///
/// Sources, where the system has them: the process's cgroup v2 `memory.events` (a rise in
/// `high`/`max`/`oom`/`oom_kill`) and PSI (`memory.pressure` in the cgroup, else
/// `/proc/pressure/memory`; `some avg10` crossing 20 %). They are polled every ``interval``
/// while at least one handler is registered; on systems without them nothing is polled.
/// ``signalMemoryPressure()`` is the call for anything else (an app's own low-memory hook).
///
/// Thread-safe. Handlers run on the monitor's serial queue.
public final class MemoryPressureMonitor: Sendable {
    /// A handler's registration, for ``removeHandler(_:)``.
    public struct Registration: Sendable, Hashable {
        let id: UInt64
    }

    /// The monitor every ``AutoPurgingImageCache`` registers with by default.
    public static let shared = MemoryPressureMonitor()

    private struct State {
        var handlers: [UInt64: @Sendable (MemoryPressureMonitor) -> Void] = [:]
        var nextID: UInt64 = 0
        var timer: (any DispatchSourceTimer)?
        var detector = MemoryPressureDetector()
    }

    /// How often the files are read while handlers are registered. Default 2 s.
    public let interval: TimeInterval
    private let eventsPath: String?
    private let pressurePath: String?
    private let polls: Bool
    private let queue = DispatchQueue(label: "courier.memory-pressure")
    private let state = Mutex(State())

    /// A monitor of this process's cgroup (found from `/proc/self/cgroup`), polling every
    /// `interval` seconds (at least 0.1).
    public convenience init(interval: TimeInterval = 2) {
        let files = Self.systemFiles()
        self.init(memoryEventsPath: files.events, pressurePath: files.pressure, interval: interval)
    }

    /// A monitor of the given files (either may be nil), polling every `interval` seconds (at
    /// least 0.1; NaN means the default, 2).
    public convenience init(memoryEventsPath: String?, pressurePath: String?, interval: TimeInterval = 2) {
        self.init(memoryEventsPath: memoryEventsPath, pressurePath: pressurePath, interval: interval, polls: true)
    }

    /// `polls: false` reads the files only in ``checkNow()`` (tests drive it by hand).
    init(memoryEventsPath: String?, pressurePath: String?, interval: TimeInterval, polls: Bool) {
        self.eventsPath = memoryEventsPath
        self.pressurePath = pressurePath
        self.interval = interval.isNaN ? 2 : max(interval, 0.1)
        self.polls = polls
    }

    /// Whether there is anything to poll on this system.
    public var hasSystemSignal: Bool { eventsPath != nil || pressurePath != nil }

    /// Registers `handler`, called on each pressure event; starts polling with the first one.
    @discardableResult
    public func addHandler(_ handler: @escaping @Sendable (MemoryPressureMonitor) -> Void) -> Registration {
        state.withLock { state in
            state.nextID += 1
            state.handlers[state.nextID] = handler
            if state.timer == nil, polls, hasSystemSignal { state.timer = makeTimer() }
            return Registration(id: state.nextID)
        }
    }

    /// Removes a handler; polling stops with the last one.
    public func removeHandler(_ registration: Registration) {
        let timer: (any DispatchSourceTimer)? = state.withLock { state in
            state.handlers.removeValue(forKey: registration.id)
            guard state.handlers.isEmpty, let timer = state.timer else { return nil }
            state.timer = nil
            return timer
        }
        timer?.cancel()
    }

    /// Calls every handler now (on the monitor's queue), as a memory warning would; for apps and
    /// services with their own low-memory signal.
    public func signalMemoryPressure() {
        let handlers = state.withLock { Array($0.handlers.values) }
        queue.async {
            for handler in handlers { handler(self) }
        }
    }

    /// Reads the files once and signals pressure when the reading shows new pressure.
    /// Returns whether it did. (The poll calls this; tests and tools may too.)
    @discardableResult
    public func checkNow() -> Bool {
        let reading = MemoryPressureReading(
            eventCount: eventsPath.flatMap(Self.read).flatMap(MemoryPressureReading.eventCount(fromMemoryEvents:)),
            someAverage10: pressurePath.flatMap(Self.read).flatMap(MemoryPressureReading.someAverage10(fromPressure:)))
        let pressure = state.withLock { $0.detector.observe(reading) }
        if pressure { signalMemoryPressure() }
        return pressure
    }

    private func makeTimer() -> any DispatchSourceTimer {
        let timer = DispatchSource.makeTimerSource(queue: queue)
        let nanoseconds = Int(min(interval, 3600) * 1_000_000_000)
        timer.schedule(deadline: .now(), repeating: .nanoseconds(nanoseconds), leeway: .milliseconds(100))
        timer.setEventHandler { [weak self] in self?.checkNow() }
        timer.resume()
        return timer
    }

    /// The text of the regular file at `path` (its first 64 KiB); nil for anything else. The
    /// path is the caller's: it is opened only as a regular file (``RegularFile``: a FIFO or a
    /// device is never opened, one swapped in meanwhile is never read).
    private static func read(_ path: String) -> String? {
        guard let opened = try? RegularFile.open(path) else { return nil }
        let handle = FileHandle(fileDescriptor: opened.descriptor, closeOnDealloc: true)
        defer { try? handle.close() }
        // These files are a few hundred bytes; 64 KiB bounds a strange one.
        guard let data = try? handle.read(upToCount: 64 * 1024) else { return nil }
        return String(decoding: data, as: UTF8.self)
    }

    private static func systemFiles() -> (events: String?, pressure: String?) {
        #if os(Linux)
        let exists = { (path: String) in FileManager.default.isReadableFile(atPath: path) }
        var events: String?
        var pressure: String?
        if let text = read("/proc/self/cgroup"), let path = MemoryPressureReading.cgroupPath(fromProcSelfCgroup: text) {
            let base = "/sys/fs/cgroup" + (path == "/" ? "" : path)
            if exists(base + "/memory.events") { events = base + "/memory.events" }
            if exists(base + "/memory.pressure") { pressure = base + "/memory.pressure" }
        }
        if pressure == nil, exists("/proc/pressure/memory") { pressure = "/proc/pressure/memory" }
        return (events, pressure)
        #else
        return (nil, nil)
        #endif
    }
}
