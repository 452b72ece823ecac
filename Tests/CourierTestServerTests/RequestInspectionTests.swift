import CourierTestServer
import Foundation
import Testing

@Suite("httpbin request inspection and echo endpoints")
struct RequestInspectionTests {
    @Test("/get reports args (repeated keys as arrays), headers, origin and url")
    func get() async throws {
        try await TestServer.withRunning { server in
            let response = try await server.request("/get?a=1&b=x%20y&a=2&c=", headers: [("X-Custom-Header", "hello"), ("User-Agent", "raw/1")])
            #expect(response.status == 200)
            #expect(response.header("content-type") == "application/json")
            let json = try #require(response.json)
            #expect(Set(json.keys) == ["args", "headers", "origin", "url"])
            let args = try #require(response.object("args"))
            #expect(args["a"] as? [String] == ["1", "2"])
            #expect(args["b"] as? String == "x y")
            #expect(args["c"] as? String == "")
            let headers = try #require(response.object("headers"))
            #expect(headers["X-Custom-Header"] as? String == "hello")
            #expect(headers["User-Agent"] as? String == "raw/1")
            #expect(headers["Host"] as? String == server.authority)
            #expect(response.string("origin") == "127.0.0.1")
            #expect(response.string("url") == "http://\(server.authority)/get?a=1&b=x%20y&a=2&c=")
        }
    }

    @Test("/get refuses POST with 405 and Allow")
    func getRefusesPost() async throws {
        try await TestServer.withRunning { server in
            let response = try await server.request("/get", method: "POST", body: [])
            #expect(response.status == 405)
            #expect(response.header("allow")?.contains("GET") == true)
        }
    }

    @Test("/post parses a JSON body into json and keeps it in data")
    func postJSON() async throws {
        try await TestServer.withRunning { server in
            let body = #"{"name": "courier", "count": 3, "ok": true, "list": [1, 2.5, null]}"#
            let response = try await server.request(
                "/post?q=1",
                method: "POST",
                headers: [("Content-Type", "application/json")],
                body: Array(body.utf8)
            )
            #expect(response.status == 200)
            let json = try #require(response.json)
            #expect(Set(json.keys) == ["args", "data", "files", "form", "headers", "json", "origin", "url"])
            #expect(response.string("data") == body)
            let parsed = try #require(response.object("json"))
            #expect(parsed["name"] as? String == "courier")
            #expect(parsed["count"] as? Int == 3)
            #expect(parsed["ok"] as? Bool == true)
            #expect((parsed["list"] as? [Any])?.count == 3)
            #expect(response.object("form")?.isEmpty == true)
            #expect(response.object("files")?.isEmpty == true)
            #expect(response.object("args")?["q"] as? String == "1")
        }
    }

    @Test("/put, /patch and /delete echo with their method only")
    func otherMethods() async throws {
        try await TestServer.withRunning { server in
            for method in ["PUT", "PATCH", "DELETE"] {
                let path = "/" + method.lowercased()
                let ok = try await server.request(path, method: method, body: Array("plain text".utf8))
                #expect(ok.status == 200)
                #expect(ok.string("data") == "plain text")
                #expect(ok.json?["json"] is NSNull)
                let wrong = try await server.request(path, method: "GET")
                #expect(wrong.status == 405)
            }
        }
    }

    @Test("urlencoded bodies become form")
    func urlencodedForm() async throws {
        try await TestServer.withRunning { server in
            let response = try await server.request(
                "/post",
                method: "POST",
                headers: [("Content-Type", "application/x-www-form-urlencoded")],
                body: Array("a=1&b=hello+world&a=2&c=%E2%9C%93".utf8)
            )
            let form = try #require(response.object("form"))
            #expect(form["a"] as? [String] == ["1", "2"])
            #expect(form["b"] as? String == "hello world")
            #expect(form["c"] as? String == "✓")
            #expect(response.string("data") == "")
            #expect(response.json?["json"] is NSNull)
        }
    }

    @Test("non-UTF-8 bodies are reported as a base64 data URL")
    func binaryData() async throws {
        try await TestServer.withRunning { server in
            let response = try await server.request("/post", method: "POST", body: [0xFF, 0x00, 0xFE])
            #expect(response.string("data") == "data:application/octet-stream;base64,/wD+")
        }
    }

    @Test("/anything and /anything/* accept any method and report it")
    func anything() async throws {
        try await TestServer.withRunning { server in
            for method in ["GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "PROPFIND"] {
                let response = try await server.request("/anything/deeper/path?x=y", method: method, body: method == "GET" ? nil : [])
                #expect(response.status == 200)
                #expect(response.string("method") == method)
                #expect(response.string("url") == "http://\(server.authority)/anything/deeper/path?x=y")
                #expect(Set(response.json?.keys.map { $0 } ?? []) == ["args", "data", "files", "form", "headers", "json", "method", "origin", "url"])
            }
        }
    }

    @Test("/headers, /ip, /user-agent and /uuid")
    func smallInspectionEndpoints() async throws {
        try await TestServer.withRunning { server in
            let headers = try await server.request("/headers", headers: [("Accept", "a/b"), ("X-Two", "1"), ("x-two", "2")])
            #expect(headers.object("headers")?["Accept"] as? String == "a/b")
            #expect(headers.object("headers")?["X-Two"] as? String == "1,2")

            let ip = try await server.request("/ip")
            #expect(ip.string("origin") == "127.0.0.1")

            let agent = try await server.request("/user-agent", headers: [("User-Agent", "Courier/1.0")])
            #expect(agent.string("user-agent") == "Courier/1.0")

            let first = try #require(try await server.request("/uuid").string("uuid"))
            let second = try #require(try await server.request("/uuid").string("uuid"))
            #expect(UUID(uuidString: first) != nil)
            #expect(first != second)
            #expect(first == first.lowercased())
        }
    }

    @Test("HEAD gets headers with the length of the GET body, and no body")
    func head() async throws {
        try await TestServer.withRunning { server in
            let exchange = try await server.exchange("/json", method: "HEAD")
            let response = try #require(exchange.response)
            #expect(response.status == 200)
            let length = try #require(response.header("content-length").flatMap(Int.init))
            #expect(length > 100)
            #expect(response.rawBody.isEmpty)
        }
    }

    @Test("unknown paths are 404")
    func notFound() async throws {
        try await TestServer.withRunning { server in
            let response = try await server.request("/no/such/thing")
            #expect(response.status == 404)
        }
    }

    @Test("Expect: 100-continue gets an interim 100 before the body is sent")
    func expectContinue() async throws {
        try await TestServer.withRunning { server in
            let result = try await Task.detached {
                let fd = try RawHTTPClient.connect(host: "127.0.0.1", port: server.port, timeout: 5)
                defer { close(fd) }
                try RawHTTPClient.sendAll(
                    fd,
                    Array("POST /post HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n".utf8)
                )
                var buffer = [UInt8](repeating: 0, count: 1024)
                let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                let interim = String(decoding: buffer[0..<max(0, count)], as: UTF8.self)
                try RawHTTPClient.sendAll(fd, Array("hello".utf8))
                return (interim, try RawHTTPClient.readAll(fd, stopWhenComplete: false))
            }.value
            #expect(result.0 == "HTTP/1.1 100 Continue\r\n\r\n")
            let response = try #require(result.1.response)
            #expect(response.status == 200)
            #expect(response.string("data") == "hello")
        }
    }
}
