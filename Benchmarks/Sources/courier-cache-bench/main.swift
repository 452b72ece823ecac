// courier-cache-bench: a cached small GET (memory and disk HTTPCache) against the same GET
// over the network to nginx, through URLSessionManager.data(for:), in one run.
//
//   Benchmarks/nginx/setup.sh start
//   swift run -c release --package-path Benchmarks courier-cache-bench [URL] [REQUESTS] [ROUNDS]
//
// Defaults: http://127.0.0.1:8089/json, 5,000 sequential requests per measurement, 3 rounds
// (network, memory, disk interleaved in each round); prints each row's median req/s.
// Every cached response is checked to be a cache hit (metrics.resourceFetchType ==
// .localCache); nginx's static file has ETag/Last-Modified but no Cache-Control, so the
// cached rows ask with .returnCacheDataElseLoad (the stored response is used without
// revalidation, as a fresh hit is).
import Courier
import CourierEngine
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

let arguments = CommandLine.arguments
let url = URL(string: arguments.count > 1 ? arguments[1] : "http://127.0.0.1:8089/json")!
let requests = arguments.count > 2 ? Int(arguments[2]) ?? 5000 : 5000
let rounds = arguments.count > 3 ? Int(arguments[3]) ?? 3 : 3

enum Row: String, CaseIterable {
    case network = "network GET (nginx)"
    case memory = "cached GET, memory"
    case disk = "cached GET, disk"
}

struct BenchFailure: Error, CustomStringConvertible {
    var description: String
}

func makeManager(_ row: Row, directory: URL) -> URLSessionManager {
    var configuration = SessionConfiguration()
    switch row {
    case .network: break
    case .memory: configuration.cache = HTTPCache(memoryCapacity: 16 << 20, diskCapacity: 0, directory: nil)
    case .disk: configuration.cache = HTTPCache(memoryCapacity: 0, diskCapacity: 64 << 20, directory: directory)
    }
    let manager = URLSessionManager(configuration: configuration)
    manager.responseSerializer = HTTPResponseSerializer()
    return manager
}

/// One data task; returns the body size and whether it came from the cache.
func get(_ manager: URLSessionManager, policy: URLRequest.CachePolicy) async throws -> (Int, Bool) {
    let request = URLRequest(url: url, cachePolicy: policy)
    return try await withCheckedThrowingContinuation { continuation in
        let box = TaskBox()
        box.task = manager.dataTask(with: request, completionHandler: { response, object, error in
            if let error { return continuation.resume(throwing: error) }
            guard response?.statusCode == 200, let data = object as? Data else {
                return continuation.resume(throwing: BenchFailure(description: "status \(response?.statusCode ?? 0)"))
            }
            continuation.resume(returning: (data.count, box.task?.metrics?.resourceFetchType == .localCache))
        })
        box.task?.resume()
    }
}

final class TaskBox: @unchecked Sendable {
    var task: DataTask?
}

func measure(_ row: Row) async throws -> Double {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-cache-bench-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: directory) }
    let manager = makeManager(row, directory: directory)
    defer { manager.invalidateSessionCancelingTasks(true, resetSession: false) }
    let policy: URLRequest.CachePolicy = row == .network ? .reloadIgnoringLocalCacheData : .returnCacheDataElseLoad
    _ = try await get(manager, policy: policy)  // warm up: the connection, and the stored entry
    let start = ContinuousClock.now
    var hits = 0
    var bytes = 0
    for _ in 0..<requests {
        let (count, hit) = try await get(manager, policy: policy)
        bytes += count
        if hit { hits += 1 }
    }
    let elapsed = ContinuousClock.now - start
    let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    if row != .network, hits != requests { throw BenchFailure(description: "\(row.rawValue): \(hits) of \(requests) were cache hits") }
    if row == .network, hits != 0 { throw BenchFailure(description: "network row served from a cache") }
    if bytes == 0 { throw BenchFailure(description: "empty bodies") }
    return Double(requests) / seconds
}

var results: [Row: [Double]] = [:]
for round in 1...rounds {
    for row in Row.allCases {
        let rate = try await measure(row)
        results[row, default: []].append(rate)
        print("round \(round) \(row.rawValue): \(Int(rate)) req/s")
    }
}
print("\nmedian of \(rounds) rounds, \(requests) sequential GETs of \(url.absoluteString) each:")
for row in Row.allCases {
    let sorted = (results[row] ?? []).sorted()
    let median = sorted.isEmpty ? 0 : sorted[sorted.count / 2]
    print("  \(row.rawValue.padding(toLength: 22, withPad: " ", startingAt: 0)) \(Int(median)) req/s")
}
