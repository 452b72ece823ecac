import Courier
import CourierTestServer
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// The README's Unix domain socket example, against nginx on a socket answering Docker's
/// `GET /v1.45/containers/json` (a server that is not Courier's), and the session's side of
/// sockets and overrides against the test server.
@Suite("README Unix domain sockets")
struct UnixSocketReadmeTests {
    @Test(
        "the README's Docker-shaped example, against nginx on a Unix domain socket",
        .enabled(if: NginxOnUnixSocket.binary != nil, "nginx is not installed (scripts/install-dependencies.sh installs it)"))
    func readmeUnixSocketExample() async throws {
        try await NginxOnUnixSocket.withRunning { nginx in
            let socketPath = nginx.socketPath
            // The example begins
            struct Container: Decodable, Sendable {
                var id: String, image: String
                enum CodingKeys: String, CodingKey { case id = "Id", image = "Image" }
            }
            var configuration = SessionConfiguration()
            configuration.unixSocketPaths = ["docker": socketPath]        // e.g. "/var/run/docker.sock"
            let docker = HTTPSessionManager(baseURL: URL(string: "http://docker/v1.45/"), configuration: configuration)
            let containers = try await docker.get("containers/json", parameters: ["all": 1], as: [Container].self)
            print(containers.value.map(\.image))                          // the images of every container
            // The example ends
            #expect(containers.value.map(\.id) == ["4f2c9e"])
            #expect(containers.value.map(\.image) == ["nginx:1.27"])
        }
    }

    @Test(
        "nginx on a socket: the Host header is the mapped name, or localhost for an http+unix URL; connections are reused",
        .enabled(if: NginxOnUnixSocket.binary != nil, "nginx is not installed (scripts/install-dependencies.sh installs it)"))
    func nginxHostHeader() async throws {
        try await NginxOnUnixSocket.withRunning { nginx in
            var configuration = SessionConfiguration()
            configuration.unixSocketPaths = ["docker": nginx.socketPath]
            let manager = HTTPSessionManager(configuration: configuration)
            let encoded = nginx.socketPath.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
            let cases = [("http://docker/host", "docker"), ("http://docker/host", "docker"), ("http+unix://\(encoded)/host", "localhost")]
            for (index, (address, host)) in cases.enumerated() {
                let result = try await manager.get(address, serializer: HTTPResponseSerializer())
                #expect(result.status == .ok, "\(address)")
                #expect(result.value.map { String(decoding: $0, as: UTF8.self) } == host, "\(address)")
                #expect(result.metrics?.remoteAddress == nginx.socketPath)
                #expect(result.metrics?.isReusedConnection == (index == 1), "\(address)")
            }
        }
    }

    @Test("a session's metrics name the socket, or the address an override chose")
    func sessionMetrics() async throws {
        let socketPath = "/tmp/courier-session-\(UUID().uuidString.prefix(8)).sock"
        try await TestServer.withRunning(.init(unixSocketPath: socketPath)) { socketServer in
            try await TestServer.withRunning { server in
                var configuration = SessionConfiguration()
                configuration.unixSocketPaths = ["docker": socketPath]
                configuration.resolveOverrides = [try ResolveOverride(parsing: "api.test:\(server.port):127.0.0.1")]
                configuration.connectToOverrides = [
                    try ConnectToOverride(host: "front.test", port: 80, connectHost: "127.0.0.1", connectPort: server.port)
                ]
                let manager = HTTPSessionManager(configuration: configuration)
                let cases: [(String, EngineMetrics.AddressOverride?)] = [
                    ("http://docker/get", nil), ("http://api.test:\(server.port)/get", .resolve), ("http://front.test/get", .connectTo),
                ]
                for (address, override) in cases {
                    let result = try await manager.get(address, serializer: HTTPResponseSerializer())
                    #expect(result.status == .ok, "\(address)")
                    #expect(result.metrics?.addressOverride == override, "\(address)")
                    #expect(result.metrics?.remoteAddress == (override == nil ? socketPath : "127.0.0.1"), "\(address)")
                }
                #expect(socketServer.requestsReceived == 1)
                #expect(server.requestsReceived == 2)
            }
        }
    }
}
