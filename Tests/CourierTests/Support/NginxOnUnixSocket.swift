import CourierTestServer
import Foundation

/// nginx (Debian's, installed by `scripts/install-dependencies.sh`) listening on a Unix domain
/// socket in a folder of its own: a server that is not Courier's, for the socket interop tests.
/// Serves a Docker-shaped `GET /v1.45/containers/json` (a fixed JSON list) and `/host` (the
/// request's `Host` header as the body).
struct NginxOnUnixSocket {
    /// The JSON `/v1.45/containers/json` answers.
    static let containersJSON = #"[{"Id":"4f2c9e","Image":"nginx:1.27","State":"running"}]"#

    /// The nginx binary, or nil when nginx is not installed (the tests then skip, saying so).
    static let binary: String? = ["/usr/sbin/nginx", "/usr/local/sbin/nginx", "/usr/bin/nginx"]
        .first { FileManager.default.isExecutableFile(atPath: $0) }

    /// The socket nginx listens on.
    let socketPath: String
    private let folder: URL
    private let process: Process

    /// Starts nginx in the foreground as a child process and waits (up to 10 s) for its socket,
    /// polling with `Task.sleep` (a blocked thread would be one of the cooperative pool's few).
    static func start() async throws -> NginxOnUnixSocket {
        guard let binary else { throw NginxUnavailable() }
        let folder = URL(fileURLWithPath: "/tmp/courier-nginx-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let socket = folder.appendingPathComponent("nginx.sock").path
        let configuration = """
            daemon off;
            worker_processes 1;
            pid \(folder.path)/nginx.pid;
            error_log \(folder.path)/error.log warn;
            events { worker_connections 64; }
            http {
                access_log off;
                client_body_temp_path \(folder.path);
                server {
                    listen unix:\(socket);
                    location = /v1.45/containers/json {
                        default_type application/json;
                        return 200 '\(containersJSON)';
                    }
                    location = /host {
                        default_type text/plain;
                        return 200 $http_host;
                    }
                }
            }
            """
        let file = folder.appendingPathComponent("nginx.conf")
        try Data(configuration.utf8).write(to: file)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = ["-p", folder.path, "-e", folder.path + "/error.log", "-c", file.path]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try ProcessLauncher.run(process)
        let server = NginxOnUnixSocket(socketPath: socket, folder: folder, process: process)
        let deadline = Date().addingTimeInterval(10)
        while !FileManager.default.fileExists(atPath: socket) {
            guard process.isRunning, Date() < deadline else {
                let log = (try? String(contentsOf: folder.appendingPathComponent("error.log"), encoding: .utf8)) ?? ""
                await server.stop()
                throw NginxFailed(log: log)
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        return server
    }

    /// Stops nginx (SIGTERM, then waits up to 10 s for it to exit) and removes its folder.
    func stop() async {
        if process.isRunning { process.terminate() }
        let deadline = Date().addingTimeInterval(10)
        while process.isRunning, Date() < deadline {
            try? await Task.sleep(for: .milliseconds(20))
        }
        try? FileManager.default.removeItem(at: folder)
    }

    /// Starts nginx, runs `body` with it, stops it whether `body` returns or throws.
    static func withRunning<T>(_ body: (NginxOnUnixSocket) async throws -> T) async throws -> T {
        let server = try await start()
        do {
            let result = try await body(server)
            await server.stop()
            return result
        } catch {
            await server.stop()
            throw error
        }
    }

    /// nginx is not installed.
    struct NginxUnavailable: Error, CustomStringConvertible {
        var description: String { "nginx is not installed (scripts/install-dependencies.sh installs it)" }
    }

    /// nginx did not come up; its error log says why.
    struct NginxFailed: Error, CustomStringConvertible {
        let log: String
        var description: String { "nginx did not start: \(log)" }
    }
}
