import Instrumentation
import NIOHTTP1

/// Writes a tracer's context (e.g. W3C `traceparent` and `tracestate`) into an outgoing
/// request's headers, replacing any field of the same name.
struct HTTPHeadersInjector: Injector {
    func inject(_ value: String, forKey key: String, into carrier: inout HTTPHeaders) {
        carrier.replaceOrAdd(name: key, value: value)
    }
}
