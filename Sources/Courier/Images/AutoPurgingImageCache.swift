#if canImport(FoundationNetworking)
import Foundation
public import FoundationNetworking
#else
public import Foundation
#endif
import Synchronization

/// AFNetworking's `AFAutoPurgingImageCache`: an in-memory ``ImageRequestCache`` that purges
/// the least recently used images when it grows past its capacity.
///
/// - Each image costs `pixelWidth × pixelHeight × 4` bytes (its decoded size).
/// - Reading an image refreshes its access time.
/// - After an add that leaves ``memoryUsage`` above ``memoryCapacity``, images go oldest
///   access first until the bytes removed reach `memoryUsage − preferredMemoryUsageAfterPurge`.
/// - The key for a request is its URL's absolute string followed by the additional identifier.
/// - Memory pressure empties it, as a memory warning does in AFN: on Linux the cgroup v2
///   `memory.events` / PSI signals seen by ``MemoryPressureMonitor/shared`` (when the cache
///   was made with `purgesOnMemoryPressure`), or a call to ``handleMemoryPressure()``.
///
/// Thread-safe: every call takes one lock, so a read sees every earlier add and its purge.
public final class AutoPurgingImageCache: ImageRequestCache {
    private struct CachedImage {
        var image: Image
        var cost: UInt64
        var lastAccess: UInt64
    }

    private struct State {
        var images: [String: CachedImage] = [:]
        var usage: UInt64 = 0
        /// A logical clock: each add or read takes the next stamp, so "oldest access" is exact
        /// even when two accesses share a wall-clock instant.
        var clock: UInt64 = 0

        mutating func tick() -> UInt64 {
            clock &+= 1
            return clock
        }
    }

    private let state = Mutex(State())
    private let rule: ImageCachePurgeRule
    private let pressureRegistration: Mutex<MemoryPressureMonitor.Registration?> = Mutex(nil)

    /// The usage above which an add purges. Default 100 MiB.
    public var memoryCapacity: UInt64 { rule.capacity }
    /// What a purge aims to bring usage down to. Default 60 MiB.
    public var preferredMemoryUsageAfterPurge: UInt64 { rule.preferredUsageAfterPurge }
    /// The summed cost of the cached images, in bytes.
    public var memoryUsage: UInt64 { state.withLock { $0.usage } }

    /// Creates an empty cache.
    /// - Parameters:
    ///   - memoryCapacity: the usage above which an add purges (default 100 MiB).
    ///   - preferredMemoryUsageAfterPurge: the usage a purge aims for (default 60 MiB; a value
    ///     above the capacity is treated as the capacity).
    ///   - purgesOnMemoryPressure: empty the cache whenever ``MemoryPressureMonitor/shared``
    ///     reports pressure (default true, like AFN's memory-warning observer).
    public init(
        memoryCapacity: UInt64 = 100 * 1024 * 1024, preferredMemoryUsageAfterPurge: UInt64 = 60 * 1024 * 1024,
        purgesOnMemoryPressure: Bool = true
    ) {
        rule = ImageCachePurgeRule(
            capacity: memoryCapacity, preferredUsageAfterPurge: min(preferredMemoryUsageAfterPurge, memoryCapacity))
        if purgesOnMemoryPressure {
            let registration = MemoryPressureMonitor.shared.addHandler { [weak self] _ in self?.handleMemoryPressure() }
            pressureRegistration.withLock { $0 = registration }
        }
    }

    deinit {
        pressureRegistration.withLock { registration in
            if let registration { MemoryPressureMonitor.shared.removeHandler(registration) }
        }
    }

    /// Empties the cache, as AFN does on `UIApplicationDidReceiveMemoryWarningNotification`.
    /// Call it from your own low-memory signal; it is also what memory pressure triggers.
    public func handleMemoryPressure() {
        removeAllImages()
    }

    // MARK: - ImageCache

    /// Stores `image` under `identifier` (replacing and un-charging what was there), then purges
    /// if usage exceeds ``memoryCapacity``.
    public func add(_ image: Image, withIdentifier identifier: String) {
        let cost = ImageCachePurgeRule.cost(pixelWidth: image.pixelWidth, pixelHeight: image.pixelHeight)
        state.withLock { state in
            let stamp = state.tick()
            if let previous = state.images.updateValue(
                CachedImage(image: image, cost: cost, lastAccess: stamp), forKey: identifier)
            {
                state.usage -= min(state.usage, previous.cost)
            }
            state.usage = ImageCachePurgeRule.adding(state.usage, cost)
            let entries = state.images.lazy.map {
                ImageCachePurgeRule.Entry(identifier: $0.key, cost: $0.value.cost, lastAccess: $0.value.lastAccess)
            }
            let victims = rule.victims(of: entries, usage: state.usage)
            for identifier in victims.identifiers { state.images.removeValue(forKey: identifier) }
            state.usage -= min(state.usage, victims.bytes)
        }
    }

    /// Removes the image under `identifier`; true when there was one.
    @discardableResult
    public func removeImage(withIdentifier identifier: String) -> Bool {
        state.withLock { state in
            guard let removed = state.images.removeValue(forKey: identifier) else { return false }
            state.usage -= min(state.usage, removed.cost)
            return true
        }
    }

    /// Removes every image; true when there was at least one.
    @discardableResult
    public func removeAllImages() -> Bool {
        state.withLock { state in
            let hadImages = !state.images.isEmpty
            state.images.removeAll()
            state.usage = 0
            return hadImages
        }
    }

    /// The image under `identifier`, refreshing its access time; nil when absent.
    public func image(withIdentifier identifier: String) -> Image? {
        state.withLock { state in
            guard var cached = state.images[identifier] else { return nil }
            cached.lastAccess = state.tick()
            state.images[identifier] = cached
            return cached.image
        }
    }

    // MARK: - ImageRequestCache

    /// Stores `image` under the request's key (URL string + `identifier`).
    public func add(_ image: Image, for request: URLRequest, withAdditionalIdentifier identifier: String?) {
        add(image, withIdentifier: Self.imageCacheKey(for: request, withAdditionalIdentifier: identifier))
    }

    /// Removes the image under the request's key; true when there was one.
    @discardableResult
    public func removeImage(for request: URLRequest, withAdditionalIdentifier identifier: String?) -> Bool {
        removeImage(withIdentifier: Self.imageCacheKey(for: request, withAdditionalIdentifier: identifier))
    }

    /// The image under the request's key, refreshing its access time; nil when absent.
    public func image(for request: URLRequest, withAdditionalIdentifier identifier: String?) -> Image? {
        image(withIdentifier: Self.imageCacheKey(for: request, withAdditionalIdentifier: identifier))
    }

    /// Always true, as in AFN.
    public func shouldCache(_ image: Image, for request: URLRequest, withAdditionalIdentifier identifier: String?) -> Bool {
        true
    }
}
