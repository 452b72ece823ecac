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
        guard let index = items[key]?.firstIndex(where: { $0.entry.varied == varied }) else { return }
        remove(key: key, at: index)
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

    /// Removes the least recently used items until the usage fits the capacity. The first few
    /// victims are found by a scan each (an insert usually makes room for itself with one);
    /// past that the rest are taken from one sort: a scan per victim was quadratic in the
    /// number of entries (a large body inserted among 100,000 small ones scanned them all for
    /// each one it pushed out, under the cache's lock).
    private mutating func evict() {
        var scans = 0
        while usage > capacity {
            guard scans < 8 else {
                evictBySortedUse()
                return
            }
            scans += 1
            var oldest: (key: String, index: Int, lastUse: UInt64)?
            for (key, variants) in items {
                for (index, item) in variants.enumerated() {
                    if let current = oldest, current.lastUse <= item.lastUse { continue }
                    oldest = (key, index, item.lastUse)
                }
            }
            guard let oldest else { return }
            remove(key: oldest.key, at: oldest.index)
        }
    }

    /// ``evict()``'s rest: every item ordered by last use once, removed oldest first until the
    /// usage fits.
    private mutating func evictBySortedUse() {
        var order: [(lastUse: UInt64, key: String)] = []
        order.reserveCapacity(items.values.reduce(0) { $0 + $1.count })
        for (key, variants) in items {
            for item in variants { order.append((item.lastUse, key)) }
        }
        order.sort { $0.lastUse < $1.lastUse }
        for victim in order {
            guard usage > capacity else { return }
            guard let index = items[victim.key]?.firstIndex(where: { $0.lastUse == victim.lastUse }) else { continue }
            remove(key: victim.key, at: index)
        }
    }

    /// Removes one variant, in place, and its key when it was the last.
    private mutating func remove(key: String, at index: Int) {
        guard let removed = items[key]?.remove(at: index) else { return }
        usage -= removed.cost
        if items[key]?.isEmpty == true { items[key] = nil }
    }
}
