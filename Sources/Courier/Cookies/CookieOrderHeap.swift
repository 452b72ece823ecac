import Foundation

/// A min-heap of cookies by a date and their sequence number: the jar's order of eviction (last
/// access) and of expiry. Entries are never updated in place: a cookie whose date changes gets
/// a new entry, and the old one is stale; whoever pops checks an entry against the cookie it
/// names (``CookieStore`` does) and skips a stale one. Pure value, O(log n) per push and pop.
struct CookieOrderHeap: Sendable {
    /// One entry: the date it is ordered by, then the cookie's sequence number (unique per
    /// stored cookie, so no two live entries tie).
    struct Entry: Sendable, Equatable {
        var date: Date
        var sequence: UInt64

        fileprivate static func < (lhs: Entry, rhs: Entry) -> Bool {
            lhs.date != rhs.date ? lhs.date < rhs.date : lhs.sequence < rhs.sequence
        }
    }

    private var entries: [Entry] = []

    /// Entries held, stale ones included.
    var count: Int { entries.count }

    /// The smallest entry, nil when empty.
    var first: Entry? { entries.first }

    /// Adds an entry.
    mutating func push(_ entry: Entry) {
        entries.append(entry)
        var child = entries.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard entries[child] < entries[parent] else { break }
            entries.swapAt(child, parent)
            child = parent
        }
    }

    /// Removes and returns the smallest entry, nil when empty.
    mutating func popFirst() -> Entry? {
        guard let top = entries.first else { return nil }
        let last = entries.removeLast()
        guard !entries.isEmpty else { return top }
        entries[0] = last
        siftDown(from: 0)
        return top
    }

    /// A heap of exactly `entries`, built in O(n) (the store rebuilds its heaps from the live
    /// cookies so that stale entries never outnumber them).
    init(_ entries: [Entry] = []) {
        self.entries = entries
        var index = entries.count / 2
        while index > 0 {
            index -= 1
            siftDown(from: index)
        }
    }

    private mutating func siftDown(from start: Int) {
        var parent = start
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var smallest = parent
            if left < entries.count, entries[left] < entries[smallest] { smallest = left }
            if right < entries.count, entries[right] < entries[smallest] { smallest = right }
            guard smallest != parent else { return }
            entries.swapAt(parent, smallest)
            parent = smallest
        }
    }
}
