import Dispatch
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Resolves a host name to its addresses with `getaddrinfo`, on a Dispatch worker (never the
/// caller's thread), giving up after a bound.
enum DomainResolver {
    /// The longest a resolution is waited for; a resolver that takes longer counts as failed
    /// (no addresses), and its late answer is dropped.
    static let bound: DispatchTimeInterval = .seconds(10)

    /// Calls `completion` once, on a Dispatch worker, with the addresses of `name` in the
    /// resolver's order without duplicates (empty when it does not resolve or took longer
    /// than `bound`). While a lookup of `name` runs, later asks share it (one blocked thread per
    /// name, however often a hung name server is asked). `lookup` is `getaddrinfo` (tests hold it).
    static func resolve(
        _ name: String, bound: DispatchTimeInterval = DomainResolver.bound,
        lookup: @escaping @Sendable (String) -> [ReachabilityAddress] = DomainResolver.addresses(of:),
        completion: @escaping @Sendable ([ReachabilityAddress]) -> Void
    ) {
        let finished = Mutex(false)
        let finish: @Sendable ([ReachabilityAddress]) -> Void = { addresses in
            let first = finished.withLock { done -> Bool in
                defer { done = true }
                return !done
            }
            if first { completion(addresses) }
        }
        DispatchQueue.global().asyncAfter(deadline: .now() + bound) { finish([]) }
        // A lookup of this name still running (a name server that hangs outlives the bound)
        // answers this ask too, rather than another thread blocking in getaddrinfo per ask.
        let starts = running.withLock { running -> Bool in
            if running[name] != nil {
                running[name]?.append(finish)
                return false
            }
            running[name] = [finish]
            return true
        }
        guard starts else { return }
        DispatchQueue.global().async {
            let addresses = lookup(name)
            let waiting = running.withLock { $0.removeValue(forKey: name) } ?? []
            for answer in waiting { answer(addresses) }
        }
    }

    /// Names being looked up, with the answers waiting for each (one lookup per name at a time;
    /// an answer whose ask already gave up does nothing).
    private static let running = Mutex<[String: [@Sendable ([ReachabilityAddress]) -> Void]]>([:])

    /// `getaddrinfo(name)`, blocking.
    static func addresses(of name: String) -> [ReachabilityAddress] {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        #if canImport(Glibc)
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        #else
        hints.ai_socktype = SOCK_STREAM
        #endif
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(name, nil, &hints, &list) == 0, let first = list else { return [] }
        defer { freeaddrinfo(first) }
        var result: [ReachabilityAddress] = []
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let current = entry {
            if let socketAddress = current.pointee.ai_addr, let address = address(from: socketAddress),
                !result.contains(address)
            {
                result.append(address)
            }
            entry = current.pointee.ai_next
        }
        return result
    }

    private static func address(from socketAddress: UnsafeMutablePointer<sockaddr>) -> ReachabilityAddress? {
        switch Int32(socketAddress.pointee.sa_family) {
        case AF_INET:
            return socketAddress.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { ipv4 in
                withUnsafeBytes(of: ipv4.pointee.sin_addr) { ReachabilityAddress(bytes: Array($0)) }
            }
        case AF_INET6:
            return socketAddress.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { ipv6 in
                withUnsafeBytes(of: ipv6.pointee.sin6_addr) { ReachabilityAddress(bytes: Array($0)) }
            }
        default:
            return nil
        }
    }
}
