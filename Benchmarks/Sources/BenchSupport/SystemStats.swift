import Foundation

/// CPU time and peak RSS from getrusage(2).
public struct ResourceUsage: Sendable {
    public var userMicros: Int64
    public var systemMicros: Int64
    /// ru_maxrss: KiB on Linux.
    public var maxRSSKiB: Int64

    public var cpuMicros: Int64 { userMicros + systemMicros }

    public static func current(_ who: __rusage_who = RUSAGE_SELF) -> ResourceUsage {
        var usage = rusage()
        getrusage(__rusage_who_t(who.rawValue), &usage)
        return ResourceUsage(
            userMicros: Int64(usage.ru_utime.tv_sec) * 1_000_000 + Int64(usage.ru_utime.tv_usec),
            systemMicros: Int64(usage.ru_stime.tv_sec) * 1_000_000 + Int64(usage.ru_stime.tv_usec),
            maxRSSKiB: Int64(usage.ru_maxrss)
        )
    }

    public static func children() -> ResourceUsage { current(RUSAGE_CHILDREN) }

    /// This process's own peak RSS, KiB: VmHWM from /proc/self/status. Not ru_maxrss: on
    /// Linux a child started with posix_spawn/fork+exec inherits the parent's high-water
    /// mark in ru_maxrss (execve folds the old mm's peak into it), so a child of a 43 MiB
    /// parent never reports less than 43 MiB.
    public static func peakRSSKiB() -> Int64 {
        guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let line = text.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") })
        else { return current().maxRSSKiB }
        return line.split(separator: " ").dropFirst().first.flatMap { Int64($0) } ?? current().maxRSSKiB
    }
}

/// The machine-wide CPU counters of /proc/stat's first line, in clock ticks (USER_HZ).
public struct MachineCPU: Sendable {
    public var busyTicks: Int64
    public var totalTicks: Int64
    public var stealTicks: Int64

    public static let ticksPerSecond = Double(sysconf(Int32(_SC_CLK_TCK)))
    public static let cores = Double(ProcessInfo.processInfo.activeProcessorCount)

    /// Reads the aggregate `cpu` line: user nice system idle iowait irq softirq steal.
    public static func read() -> MachineCPU {
        guard let text = try? String(contentsOfFile: "/proc/stat", encoding: .utf8),
            let line = text.split(separator: "\n").first(where: { $0.hasPrefix("cpu ") })
        else { return MachineCPU(busyTicks: 0, totalTicks: 0, stealTicks: 0) }
        let fields = line.split(separator: " ").dropFirst().compactMap { Int64($0) }
        func field(_ index: Int) -> Int64 { index < fields.count ? fields[index] : 0 }
        // irq and softirq are left out of "busy": loopback traffic shows up there and is ours.
        // Steal (time the host took from this VM) is reported apart: it rises with our own
        // load here, so counting it as another process's would discard every round.
        let busy = field(0) + field(1) + field(2)
        let total = (0..<8).reduce(Int64(0)) { $0 + field($1) }
        return MachineCPU(busyTicks: busy, totalTicks: total, stealTicks: field(7))
    }
}

/// CPU seconds used so far by every process whose command name is `name` (nginx's master and
/// worker), from /proc/PID/stat utime + stime.
public func processCPUSeconds(named name: String) -> Double {
    guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else { return 0 }
    var seconds = 0.0
    for entry in entries where entry.allSatisfy(\.isNumber) {
        guard let comm = try? String(contentsOfFile: "/proc/\(entry)/comm", encoding: .utf8),
            comm.trimmingCharacters(in: .whitespacesAndNewlines) == name,
            let pid = Int32(entry)
        else { continue }
        seconds += processCPUSeconds(pid: pid)
    }
    return seconds
}

/// CPU seconds (utime + stime) used so far by the process `pid`, from /proc/PID/stat; 0 when
/// it is gone.
public func processCPUSeconds(pid: Int32) -> Double {
    guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
        let close = stat.lastIndex(of: ")")
    else { return 0 }
    // Fields after "(comm)": state is field 3; utime and stime are fields 14 and 15.
    let rest = stat[stat.index(after: close)...].split(separator: " ")
    guard rest.count > 12, let user = Int64(rest[11]), let system = Int64(rest[12]) else { return 0 }
    return Double(user + system) / MachineCPU.ticksPerSecond
}

/// Names of running processes that look like a compiler or build (another session's
/// `swift build`), which would pollute the numbers.
public func runningBuildProcesses() -> [String] {
    guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else { return [] }
    let watched: Set<String> = ["swift-build", "swift-frontend", "swift-driver", "clang", "ld.gold", "ld.lld", "cc1", "swift-test"]
    var found: [String] = []
    for entry in entries where entry.allSatisfy(\.isNumber) {
        guard let comm = try? String(contentsOfFile: "/proc/\(entry)/comm", encoding: .utf8) else { continue }
        let name = comm.trimmingCharacters(in: .whitespacesAndNewlines)
        if watched.contains(name) { found.append("\(name)[\(entry)]") }
    }
    return found
}

/// Measures, over a window, how much CPU went to processes that are not part of the
/// benchmark: machine busy time (user + nice + system + steal) minus this process, its
/// waited-for children, nginx and the `companions` (a server the benchmark runs in a process
/// of its own, still running, so not yet in the children's usage).
public struct ForeignLoadProbe {
    private let machine: MachineCPU
    private let selfUsage: ResourceUsage
    private let childUsage: ResourceUsage
    private let nginxSeconds: Double
    private let companions: [Int32]
    private let companionSeconds: Double
    private let start: ContinuousClock.Instant

    public init(companions: [Int32] = []) {
        machine = MachineCPU.read()
        selfUsage = ResourceUsage.current()
        childUsage = ResourceUsage.children()
        nginxSeconds = processCPUSeconds(named: "nginx")
        self.companions = companions
        companionSeconds = Self.seconds(of: companions)
        start = .now
    }

    private static func seconds(of pids: [Int32]) -> Double {
        pids.reduce(0) { $0 + processCPUSeconds(pid: $1) }
    }

    /// The share of the whole machine (all cores) used by others since `init`, 0...1,
    /// and the share stolen by the host.
    public func foreignShare() -> (foreign: Double, steal: Double) {
        let now = MachineCPU.read()
        let elapsed = (ContinuousClock.now - start).seconds
        guard elapsed > 0 else { return (0, 0) }
        let busy = Double(now.busyTicks - machine.busyTicks) / MachineCPU.ticksPerSecond
        let steal = Double(now.stealTicks - machine.stealTicks) / MachineCPU.ticksPerSecond
        let ours =
            Double(ResourceUsage.current().cpuMicros - selfUsage.cpuMicros) / 1e6
            + Double(ResourceUsage.children().cpuMicros - childUsage.cpuMicros) / 1e6
            + (processCPUSeconds(named: "nginx") - nginxSeconds)
            + (Self.seconds(of: companions) - companionSeconds)
        let capacity = elapsed * MachineCPU.cores
        return (max(0, busy - ours) / capacity, steal / capacity)
    }
}

extension Duration {
    public var seconds: Double {
        let (whole, fraction) = components
        return Double(whole) + Double(fraction) / 1e18
    }
}
