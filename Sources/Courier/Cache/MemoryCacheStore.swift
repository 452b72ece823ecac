import Foundation
import NIOHTTP1

/// The in-memory part of ``HTTPCache``: entries with their bodies, least recently used first
/// out when the total passes the capacity. Not thread-safe by itself: ``HTTPCache`` holds it
/// in a lock. No I/O.
struct MemoryCacheStore {
    struct Item {
        var entry: CacheEntry
        var body: Data
        var lastUse: UInt64
        var cost: Int
    }

    let capacity: Int
    /// Primary key to its stored variants.
    private var items: [String: [Item]] = [:]
    private(set) var usage = 0
    private var clock: UInt64 = 0

    init(capacity: Int) { self.capacity = max(0, capacity) }

    /// The largest body kept in memory: a tenth of the capacity, so one response can't push
    /// everything else out.
    var maximumBodySize: Int { capacity / 10 }

    /// What an entry costs: its body plus its key and header bytes.
    static func cost(_ entry: CacheEntry, bodyCount: Int) -> Int {
        entry.headerFields.reduce(bodyCount + entry.key.utf8.count + 64) { $0 + $1.reduce(0) { $0 + $1.utf8.count + 4 } }
    }

    /// The stored variant of `key` whose secondary key matches (the most recent response when
    /// several do, RFC 9111 §4.1), marked as just used.
    mutating func lookup(_ key: String, requestHeaders: HTTPHeaders) -> (CacheEntry, Data)? {
        guard var variants = items[key],
            let index = variants.indices.filter({ CacheVary.matches(variants[$0].entry.varied, requestHeaders: requestHeaders) })
                .max(by: { variants[$0].entry.responseTime < variants[$1].entry.responseTime })
        else { return nil }
        clock &+= 1
        variants[index].lastUse = clock
        items[key] = variants
        return (variants[index].entry, variants[index].body)
    }

    /// Stores `entry` with `body`, replacing the variant with the same secondary key; evicts
    /// least recently used entries to stay within the capacity. Too large a body is not kept
    /// (and any older variant with that secondary key is dropped).
    mutating func insert(_ entry: CacheEntry, body: Data) {
        remove(entry.key, varied: entry.varied)
        let cost = Self.cost(entry, bodyCount: body.count)
        guard body.count <= maximumBodySize, cost <= capacity else { return }
        clock &+= 1
        items[entry.key, default: []].append(Item(entry: entry, body: body, lastUse: clock, cost: cost))
        usage += cost
        evict()
    }

    /// Replaces the head of a stored variant (after a 304), keeping its body.
    mutating func update(_ entry: CacheEntry) {
        guard var variants = items[entry.key], let index = variants.firstIndex(where: { $0.entry.varied == entry.varied }) else {
            return
        }
        let newCost = Self.cost(entry, bodyCount: variants[index].body.count)
        usage += newCost - variants[index].cost
        variants[index].entry = entry
        variants[index].cost = newCost
        items[entry.key] = variants
        evict()
    }

    /// Removes the variant of `key` with secondary key `varied`.
    mutating func remove(_ key: String, varied: [String: String?]) {
        guard var variants = items[key], let index = variants.firstIndex(where: { $0.entry.varied == varied }) else { return }
        usage -= variants.remove(at: index).cost
        items[key] = variants.isEmpty ? nil : variants
    }

    /// Removes every variant of `key`.
    mutating func remove(_ key: String) {
        guard let variants = items.removeValue(forKey: key) else { return }
        usage -= variants.reduce(0) { $0 + $1.cost }
    }

    mutating func removeAll() {
        items.removeAll()
        usage = 0
    }

    private mutating func evict() {
        while usage > capacity {
            var oldest: (key: String, index: Int, lastUse: UInt64)?
            for (key, variants) in items {
                for (index, item) in variants.enumerated() {
                    if let current = oldest, current.lastUse <= item.lastUse { continue }
                    oldest = (key, index, item.lastUse)
                }
            }
            guard let oldest, var variants = items[oldest.key] else { return }
            usage -= variants.remove(at: oldest.index).cost
            items[oldest.key] = variants.isEmpty ? nil : variants
        }
    }
}
