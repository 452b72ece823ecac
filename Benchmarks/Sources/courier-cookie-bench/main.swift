// courier-cookie-bench: the cookie jar under a flood, against HTTPie's cookie handling
// (requests' RequestsCookieJar, Benchmarks/scripts/cookie-flood.py) measured in the same run.
//
//   pip install httpie     # requests and the jar HTTPie uses
//   swift run -c release --package-path Benchmarks courier-cookie-bench [ROUNDS] [--no-python]
//
// Cases (CPU seconds of this process, user + system, median of ROUNDS, default 3):
//   store   20 hosts × 500 cookies, one Set-Cookie per response (10,000 stores; the jar's caps,
//           180 per domain and 3,000 in all, evict as it fills)
//   load    a 3,000-cookie session (20 hosts × 150) restored as `courier --session` does
//           (SessionFile.restoreCookies: one Set-Cookie line with Path and Max-Age per cookie)
//   lookup  10,000 Cookie headers from the 3,000-cookie jar (150 cookies each)
// Each case checks its result (cookies kept, cookies sent) before it is reported.
import Courier
import Foundation

struct BenchFailure: Error, CustomStringConvertible {
    var description: String
}

/// CPU seconds (user + system) this process has used.
func cpuSeconds() -> Double {
    var usage = rusage()
    #if os(Linux)
    getrusage(Int32(RUSAGE_SELF.rawValue), &usage)
    #else
    getrusage(RUSAGE_SELF, &usage)
    #endif
    let user = Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
    let system = Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
    return user + system
}

/// Runs `work` and returns its CPU seconds.
func measure(_ work: () throws -> Void) rethrows -> Double {
    let start = cpuSeconds()
    try work()
    return cpuSeconds() - start
}

func hostURL(_ host: Int, path: String = "/") throws -> URL {
    guard let url = URL(string: "http://host\(host).example\(path)") else { throw BenchFailure(description: "bad URL") }
    return url
}

func store() throws -> Double {
    let jar = HTTPCookieJar()
    let urls = try (0..<20).map { try hostURL($0) }
    let seconds = measure {
        for (host, url) in urls.enumerated() {
            for index in 0..<500 {
                jar.storeCookies(fromSetCookieFields: ["c\(index)=\(host)-\(index)"], for: url)
            }
        }
    }
    let kept = jar.allCookies.count
    guard kept == 3_000 else { throw BenchFailure(description: "store kept \(kept) cookies, not 3,000") }
    return seconds
}

/// The session file's cookies, as `SessionFile.restoreCookies` turns them into fields.
func sessionFields() -> [(field: String, url: URL)] {
    (0..<20).flatMap { host in
        (0..<150).compactMap { index -> (String, URL)? in
            guard let url = URL(string: "http://host\(host).example/") else { return nil }
            return ("c\(index)=v\(index); Path=/; Max-Age=\(300 * 86_400)", url)
        }
    }
}

func load() throws -> (Double, HTTPCookieJar) {
    let fields = sessionFields()
    let jar = HTTPCookieJar()
    let seconds = measure {
        for (field, url) in fields { jar.storeCookies(fromSetCookieFields: [field], for: url) }
    }
    let kept = jar.allCookies.count
    guard kept == 3_000 else { throw BenchFailure(description: "load kept \(kept) cookies, not 3,000") }
    return (seconds, jar)
}

func lookup(_ jar: HTTPCookieJar) throws -> Double {
    let urls = try (0..<20).map { try hostURL($0, path: "/x") }
    var sent = 0
    let seconds = measure {
        for index in 0..<10_000 {
            sent += jar.cookies(for: urls[index % 20]).count
        }
    }
    guard sent == 10_000 * 150 else { throw BenchFailure(description: "lookup sent \(sent) cookies, not 1,500,000") }
    return seconds
}

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    return sorted.isEmpty ? 0 : sorted[sorted.count / 2]
}

/// Runs the python script; returns its `name → (seconds, count)` lines and its header.
func python(lookups: Int) throws -> (header: String, rows: [String: (Double, Int)]) {
    let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("scripts/cookie-flood.py")
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["python3", script.path, String(lookups)]
    let pipe = Pipe()
    process.standardOutput = pipe
    try process.run()
    let output = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else { throw BenchFailure(description: "cookie-flood.py exited \(process.terminationStatus)") }
    var header = ""
    var rows: [String: (Double, Int)] = [:]
    for line in String(decoding: output, as: UTF8.self).split(separator: "\n") {
        if line.hasPrefix("#") { header = String(line); continue }
        let parts = line.split(separator: " ")
        guard parts.count == 3, let seconds = Double(parts[1]), let count = Int(parts[2]) else { continue }
        rows[String(parts[0])] = (seconds, count)
    }
    return (header, rows)
}

let arguments = CommandLine.arguments.dropFirst()
let rounds = arguments.first.flatMap { Int($0) } ?? 3
let withPython = !arguments.contains("--no-python")
let pythonLookups = 200

do {
    var stores: [Double] = [], loads: [Double] = [], lookups: [Double] = []
    var pythonRows: [[String: (Double, Int)]] = []
    var pythonHeader = ""
    for _ in 0..<rounds {
        stores.append(try store())
        let (seconds, jar) = try load()
        loads.append(seconds)
        lookups.append(try lookup(jar))
        if withPython {
            let (header, rows) = try python(lookups: pythonLookups)
            pythonHeader = header
            pythonRows.append(rows)
        }
    }
    func pythonMedian(_ name: String) -> Double? {
        let values = pythonRows.compactMap { $0[name]?.0 }
        return values.isEmpty ? nil : median(values)
    }
    func cell(_ value: Double?) -> String { value.map { String(format: "%10.4f", $0) } ?? "         —" }
    print("courier-cookie-bench: CPU seconds, median of \(rounds) rounds")
    if !pythonHeader.isEmpty { print(pythonHeader) }
    print("case                                   courier   HTTPie (requests' jar)")
    print("store 10,000 (20 hosts × 500)       \(cell(median(stores)))   \(cell(pythonMedian("store")))")
    print("load a 3,000-cookie session         \(cell(median(loads)))   \(cell(pythonMedian("load")))")
    let perLookup = pythonMedian("lookup").map { $0 / Double(pythonLookups) * 10_000 }
    print("10,000 lookups in 3,000 cookies     \(cell(median(lookups)))   \(cell(perLookup))\(withPython ? " (\(pythonLookups) timed, ×\(10_000 / pythonLookups))" : "")")
} catch {
    FileHandle.standardError.write(Data("courier-cookie-bench: \(error)\n".utf8))
    exit(1)
}
