extension EngineConfiguration {
    /// `target` as this configuration sends it: to the Unix domain socket ``unixSocketPaths``
    /// names for its host (exact key first, then case-insensitively, then `*`), if any. A
    /// `+unix` URL's target already has its socket and is left as it is.
    func routed(_ target: RequestTarget) -> RequestTarget {
        guard target.socketPath == nil, !unixSocketPaths.isEmpty else { return target }
        let host = target.host.lowercased()
        let path =
            unixSocketPaths[target.host] ?? unixSocketPaths.first { $0.key.lowercased() == host }?.value ?? unixSocketPaths["*"]
        guard let path else { return target }
        return target.throughSocket(path)
    }
}
