@testable import CourierEngine
import CourierTestServer
import Foundation
import NIOCore
import Synchronization
import Testing

/// Resolver control: curl's `--resolve` entries (``ResolveOverride``), `--connect-to` rules
/// (``ConnectToOverride``) and a caller's ``HostResolver``, against TLS test servers whose
/// certificate names `wrong.host.example` (a name no resolver knows): the request reaches the
/// loopback server only through the override, and TLS checks the URL's name all the same.
@Suite("Resolve and connect-to overrides")
struct ResolveOverrideTests {
    private func trusting(_ authority: TestCertificateAuthority) -> EngineConfiguration {
        var configuration = EngineConfiguration()
        configuration.tls.trustsSystemRoots = false
        configuration.tls.additionalTrustRootsDER = [authority.rootCertificateDER]
        return configuration
    }

    @Test("--resolve: the entry's address is used, TLS checks the URL's name, the metrics say so")
    func resolveEntry() async throws {
        let authority = try TestCertificateAuthority.shared
        let server = try await TestServer.start(.init(tls: .wrongHost))
        defer { Task { try await server.shutdown() } }
        var configuration = trusting(authority)
        configuration.resolveOverrides = [try ResolveOverride(parsing: "Wrong.Host.Example:\(server.port):[::2],127.0.0.1")]
        let engine = try HTTPEngine(configuration: configuration)
        defer { Task { await engine.shutdown() } }
        let url = try #require(URL(string: "https://wrong.host.example:\(server.port)/get"))
        let response = try await engine.collect(EngineRequest(url: url))
        #expect(response.head.status == .ok)
        let json = try response.json()
        #expect((json["headers"] as? [String: Any])?["Host"] as? String == "wrong.host.example:\(server.port)")
        let metrics = response.metrics
        #expect(metrics.remoteAddress == "127.0.0.1")
        #expect(metrics.remotePort == server.port)
        #expect(metrics.addressOverride == .resolve)
        #expect(metrics.domainLookupStart == nil, "the resolver was not asked")
    }

    @Test("--resolve doesn't loosen TLS: a certificate that doesn't name the URL's host is rejected")
    func resolveKeepsVerification() async throws {
        let authority = try TestCertificateAuthority.shared
        // The certificate names wrong.host.example only (no IP address entry, which NIOSSL's
        // own check would match against the address connected to, whatever the name).
        try await withEngine(server: .init(tls: .wrongHost)) { _, server in
            var configuration = trusting(authority)
            configuration.resolveOverrides = [try ResolveOverride(host: "other.test", port: server.port, addresses: ["127.0.0.1"])]
            let engine = try HTTPEngine(configuration: configuration)
            defer { Task { await engine.shutdown() } }
            let url = try #require(URL(string: "https://other.test:\(server.port)/get"))
            let error = await engineError { _ = try await engine.collect(EngineRequest(url: url)) }
            guard case .serverTrustRejected(let host, _, _) = error else {
                Issue.record("expected serverTrustRejected, got \(String(describing: error))")
                return
            }
            #expect(host == "other.test")
        }
    }

    @Test("a certificate naming the address connected to (an IP entry) but not the host is rejected", arguments: [true, false])
    func addressEntryIsNotEnough(viaConnectTo: Bool) async throws {
        let authority = try TestCertificateAuthority.shared
        // The valid chain names localhost, 127.0.0.1 and ::1: NIOSSL alone would accept it for
        // any name once connected to 127.0.0.1.
        try await withEngine(server: .init(tls: .valid)) { _, server in
            var configuration = trusting(authority)
            if viaConnectTo {
                configuration.connectToOverrides = [try ConnectToOverride(parsing: "other.test::127.0.0.1:\(server.port)")]
            } else {
                configuration.resolveOverrides = [try ResolveOverride(host: "other.test", port: server.port, addresses: ["127.0.0.1"])]
            }
            configuration.resolveOverrides.append(try ResolveOverride(host: "localhost", port: server.port, addresses: ["127.0.0.1"]))
            let engine = try HTTPEngine(configuration: configuration)
            defer { Task { await engine.shutdown() } }
            let url = try #require(URL(string: "https://other.test:\(server.port)/get"))
            let error = await engineError { _ = try await engine.collect(EngineRequest(url: url)) }
            guard case .serverTrustRejected(let host, let reason, _) = error else {
                Issue.record("expected serverTrustRejected, got \(String(describing: error))")
                return
            }
            #expect(host == "other.test")
            #expect(reason.contains("not other.test"), "\(reason)")
            // The name the certificate holds, by an override too: accepted.
            let named = try await engine.collect(EngineRequest(url: try #require(URL(string: "https://localhost:\(server.port)/get"))))
            #expect(named.head.status == .ok)
            #expect(named.metrics.addressOverride == .resolve)
        }
    }

    @Test("certificate name matching: exact, or a wildcard for one leftmost label")
    func nameMatching() {
        #expect(OverriddenAddressNameCheck.matches("api.example.test", pattern: "api.example.test"))
        #expect(OverriddenAddressNameCheck.matches("api.example.test", pattern: "*.example.test"))
        #expect(!OverriddenAddressNameCheck.matches("example.test", pattern: "*.example.test"))
        #expect(!OverriddenAddressNameCheck.matches("a.b.example.test", pattern: "*.example.test"))
        #expect(!OverriddenAddressNameCheck.matches("other.test", pattern: "example.test"))
    }

    @Test("a custom verifier is asked about the URL's name, not the address")
    func verifierSeesTheName() async throws {
        let verifier = RecordingVerifier(.trust)
        try await withEngine(server: .init(tls: .wrongHost)) { _, server in
            var configuration = EngineConfiguration()
            configuration.tls.verifier = verifier
            configuration.resolveOverrides = [try ResolveOverride(host: "wrong.host.example", port: server.port, addresses: ["127.0.0.1"])]
            let engine = try HTTPEngine(configuration: configuration)
            defer { Task { await engine.shutdown() } }
            let url = try #require(URL(string: "https://wrong.host.example:\(server.port)/get"))
            _ = try await engine.collect(EngineRequest(url: url))
        }
        #expect(verifier.calls.map(\.host) == ["wrong.host.example"])
    }

    @Test("--connect-to: the connection goes to the rule's host and port; the request keeps its own")
    func connectTo() async throws {
        let authority = try TestCertificateAuthority.shared
        try await withEngine(server: .init(tls: .wrongHost)) { _, server in
            var configuration = trusting(authority)
            configuration.connectToOverrides = [try ConnectToOverride(parsing: "wrong.host.example:443:127.0.0.1:\(server.port)")]
            let engine = try HTTPEngine(configuration: configuration)
            defer { Task { await engine.shutdown() } }
            let response = try await engine.collect(EngineRequest(url: try #require(URL(string: "https://wrong.host.example/get"))))
            #expect(response.head.status == .ok)
            #expect((try response.json()["headers"] as? [String: Any])?["Host"] as? String == "wrong.host.example")
            #expect(response.metrics.remoteAddress == "127.0.0.1")
            #expect(response.metrics.remotePort == server.port)
            #expect(response.metrics.addressOverride == .connectTo)
        }
    }

    @Test("--connect-to to a name, which a --resolve entry answers; empty fields match any host and port")
    func connectToThenResolve() async throws {
        try await withEngine(server: .init()) { _, server in
            var configuration = EngineConfiguration()
            configuration.connectToOverrides = [try ConnectToOverride(parsing: "::backend.test:\(server.port)")]
            configuration.resolveOverrides = [try ResolveOverride(parsing: "backend.test:\(server.port):127.0.0.1")]
            let engine = try HTTPEngine(configuration: configuration)
            defer { Task { await engine.shutdown() } }
            let response = try await engine.collect(EngineRequest(url: try #require(URL(string: "http://front.test:8080/get"))))
            #expect(response.head.status == .ok)
            #expect((try response.json()["headers"] as? [String: Any])?["Host"] as? String == "front.test:8080")
            #expect(response.metrics.addressOverride == .connectTo)
            #expect(response.metrics.remotePort == server.port)
        }
    }

    @Test("a connection refused after a connect-to rule names where it went")
    func connectToRefused() async throws {
        var configuration = EngineConfiguration()
        configuration.connectToOverrides = [try ConnectToOverride(host: "example.test", port: nil, connectHost: "127.0.0.1", connectPort: 1)]
        let engine = try HTTPEngine(configuration: configuration)
        defer { Task { await engine.shutdown() } }
        let error = await engineError {
            _ = try await engine.collect(EngineRequest(url: try #require(URL(string: "http://example.test/get"))))
        }
        guard case .cannotConnect(let host, let port, let reason) = error else {
            Issue.record("expected cannotConnect, got \(String(describing: error))")
            return
        }
        #expect(host == "example.test" && port == 80)
        #expect(reason.contains("127.0.0.1:1 (by a connect-to rule)"), "\(reason)")
    }

    /// Answers from a table, counting the questions.
    final class TableResolver: HostResolver {
        let table: [String: [String]]
        let asked = Mutex<[String]>([])

        init(table: [String: [String]]) { self.table = table }

        func addresses(of host: String, port: Int) async throws -> [String] {
            asked.withLock { $0.append("\(host):\(port)") }
            guard let answer = table[host] else { throw EngineError.dnsFailure(host: host, reason: "not in the table") }
            return answer
        }
    }

    @Test("a custom HostResolver is asked (and timed); an entry for the host answers first")
    func customResolver() async throws {
        try await withEngine(server: .init()) { _, server in
            let resolver = TableResolver(table: ["api.test": ["127.0.0.1"], "bad.test": ["not-an-address"]])
            var configuration = EngineConfiguration()
            configuration.hostResolver = resolver
            configuration.resolveOverrides = [try ResolveOverride(parsing: "entry.test:\(server.port):127.0.0.1")]
            let engine = try HTTPEngine(configuration: configuration)
            defer { Task { await engine.shutdown() } }
            let response = try await engine.collect(EngineRequest(url: try #require(URL(string: "http://api.test:\(server.port)/get"))))
            #expect(response.head.status == .ok)
            #expect(response.metrics.domainLookupStart != nil && response.metrics.domainLookupEnd != nil)
            #expect(response.metrics.addressOverride == nil)
            let entry = try await engine.collect(EngineRequest(url: try #require(URL(string: "http://entry.test:\(server.port)/get"))))
            #expect(entry.head.status == .ok)
            #expect(resolver.asked.withLock { $0 } == ["api.test:\(server.port)"])
            let bad = await engineError {
                _ = try await engine.collect(EngineRequest(url: try #require(URL(string: "http://bad.test:\(server.port)/get"))))
            }
            guard case .dnsFailure(let host, let reason) = bad else {
                Issue.record("expected dnsFailure, got \(String(describing: bad))")
                return
            }
            #expect(host == "bad.test" && reason.contains("not-an-address"))
            let unknown = await engineError {
                _ = try await engine.collect(EngineRequest(url: try #require(URL(string: "http://unknown.test/get"))))
            }
            #expect(unknown == .dnsFailure(host: "unknown.test", reason: "not in the table"))
        }
    }

    /// Never answers (until cancelled).
    struct SilentResolver: HostResolver {
        func addresses(of host: String, port: Int) async throws -> [String] {
            try await Task.sleep(for: .seconds(3600))
            return []
        }
    }

    @Test("a custom resolver that doesn't answer ends at the connect timeout")
    func silentResolver() async throws {
        var configuration = EngineConfiguration()
        configuration.hostResolver = SilentResolver()
        configuration.connectTimeout = .milliseconds(200)
        let engine = try HTTPEngine(configuration: configuration)
        defer { Task { await engine.shutdown() } }
        let started = ContinuousClock.now
        let error = await engineError {
            _ = try await engine.collect(EngineRequest(url: try #require(URL(string: "http://silent.test/get"))))
        }
        #expect(error == .timedOut(.connect))
        #expect(ContinuousClock.now - started < .seconds(20))
    }

    @Test("curl's --resolve syntax: hosts, ports, address lists with IPv6 in brackets or bare")
    func parsingResolve() throws {
        let entry = try ResolveOverride(parsing: "Example.test:443:[::1],127.0.0.1,2001:db8::7")
        #expect(entry.host == "example.test")
        #expect(entry.port == 443)
        #expect(entry.addresses == ["::1", "127.0.0.1", "2001:db8::7"])
        #expect(entry.description == "example.test:443:[::1],127.0.0.1,[2001:db8::7]")
        let failures: [(String, String)] = [
            ("example.test", "it has no ':' between host and port"),
            ("example.test:443", "it has no ':' between port and addresses"),
            ("example.test:https:127.0.0.1", "the port 'https' is not a number from 1 to 65535"),
            ("example.test:0:127.0.0.1", "the port '0' is not a number from 1 to 65535"),
            ("example.test:443:", "no address is given"),
            ("example.test:443:localhost", "'localhost' is not an IPv4 or IPv6 address"),
            ("example.test:443:127.0.0.1,", "an address is empty"),
            (":443:127.0.0.1", "the host is empty"),
        ]
        for (text, reason) in failures {
            do throws(HostOverrideError) {
                _ = try ResolveOverride(parsing: text)
                Issue.record("\(text) parsed")
            } catch {
                #expect(error.input == text)
                #expect(error.reason == reason, "\(text)")
                #expect(error.description.contains("HOST:PORT:ADDRESS[,ADDRESS]"))
            }
        }
    }

    @Test("curl's --connect-to syntax: four fields, any may be empty, IPv6 in brackets")
    func parsingConnectTo() throws {
        let rule = try ConnectToOverride(parsing: "Example.test:443:[::1]:8443")
        #expect(rule.host == "example.test" && rule.port == 443 && rule.connectHost == "::1" && rule.connectPort == 8443)
        #expect(rule.description == "example.test:443:[::1]:8443")
        #expect(rule.matches(host: "example.test", port: 443) && !rule.matches(host: "example.test", port: 80))
        let any = try ConnectToOverride(parsing: ":::")
        #expect(any.host == nil && any.port == nil && any.connectHost == nil && any.connectPort == nil)
        #expect(any.matches(host: "x", port: 1))
        let failures: [(String, String)] = [
            ("a:1:b", "it has 3 fields separated by ':', not 4"),
            ("a:1:b:2:3", "it has 5 fields separated by ':', not 4"),
            ("a:99999:b:1", "the port '99999' is not a number from 1 to 65535"),
            ("a:1:[::1:2", "a '[' or ']' is unmatched"),
            ("a b:1:c:2", "the host 'a b' is not a host name or IP address"),
        ]
        for (text, reason) in failures {
            do throws(HostOverrideError) {
                _ = try ConnectToOverride(parsing: text)
                Issue.record("\(text) parsed")
            } catch {
                #expect(error.input == text)
                #expect(error.reason == reason, "\(text)")
            }
        }
    }
}
