import CourierTestServer
import Foundation
import Testing

@Suite("Status codes, redirects, cookies, response headers and caching")
struct StatusRedirectCookieCacheTests {
    @Test("/status/{code} answers with that code and httpbin's extras")
    func status() async throws {
        try await TestServer.withRunning { server in
            for code in [200, 201, 204, 400, 404, 500, 503] {
                let response = try await server.request("/status/\(code)", method: code == 201 ? "POST" : "GET", body: code == 201 ? [] : nil)
                #expect(response.status == code)
            }
            let redirect = try await server.request("/status/302")
            #expect(redirect.header("location") == "/redirect/1")
            let unauthorized = try await server.request("/status/401")
            #expect(unauthorized.header("www-authenticate") == "Basic realm=\"Fake Realm\"")
            let teapot = try await server.request("/status/418")
            #expect(teapot.bodyText.contains("teapot"))
            let invalid = try await server.request("/status/abc")
            #expect(invalid.status == 400)
        }
    }

    @Test("/status with a list picks one of its codes")
    func statusList() async throws {
        try await TestServer.withRunning { server in
            var seen = Set<Int>()
            for _ in 0..<40 {
                seen.insert(try await server.request("/status/201,202,203:2").status)
            }
            #expect(seen.isSubset(of: [201, 202, 203]))
            #expect(seen.count >= 2)
            let weighted = try await server.request("/status/500:0,299:1")
            #expect(weighted.status == 299)
        }
    }

    @Test("/redirect/{n}, /relative-redirect/{n} and /absolute-redirect/{n} count down to /get")
    func redirects() async throws {
        try await TestServer.withRunning { server in
            let base = "http://\(server.authority)"
            #expect(try await server.request("/redirect/3").header("location") == "/relative-redirect/2")
            #expect(try await server.request("/redirect/1").header("location") == "/get")
            #expect(try await server.request("/redirect/2?absolute=true").header("location") == "\(base)/absolute-redirect/1")
            #expect(try await server.request("/relative-redirect/2").header("location") == "/relative-redirect/1")
            #expect(try await server.request("/relative-redirect/1").header("location") == "/get")
            let absolute = try await server.request("/absolute-redirect/2")
            #expect(absolute.status == 302)
            #expect(absolute.header("location") == "\(base)/absolute-redirect/1")
            #expect(try await server.request("/absolute-redirect/1").header("location") == "\(base)/get")
        }
    }

    @Test("/redirect-to uses url and a 3xx status_code")
    func redirectTo() async throws {
        try await TestServer.withRunning { server in
            let plain = try await server.request("/redirect-to?url=http%3A%2F%2Fexample.com%2Fa%3Fb%3Dc")
            #expect(plain.status == 302)
            #expect(plain.header("location") == "http://example.com/a?b=c")
            let permanent = try await server.request("/redirect-to?url=/get&status_code=308", method: "POST", body: [])
            #expect(permanent.status == 308)
            let notRedirect = try await server.request("/redirect-to?url=/get&status_code=200")
            #expect(notRedirect.status == 302)
            let missing = try await server.request("/redirect-to")
            #expect(missing.status == 400)
        }
    }

    @Test("/cookies, /cookies/set and /cookies/delete")
    func cookies() async throws {
        try await TestServer.withRunning { server in
            let listed = try await server.request("/cookies", headers: [("Cookie", "a=1; b=two words; c=\"q\"")])
            let cookies = try #require(listed.object("cookies"))
            #expect(cookies["a"] as? String == "1")
            #expect(cookies["b"] as? String == "two words")
            #expect(cookies["c"] as? String == "q")

            let set = try await server.request("/cookies/set?k1=v1&k2=v2")
            #expect(set.status == 302)
            #expect(set.header("location") == "/cookies")
            #expect(set.headerValues("set-cookie") == ["k1=v1; Path=/", "k2=v2; Path=/"])

            let setPath = try await server.request("/cookies/set/name/value")
            #expect(setPath.headerValues("set-cookie") == ["name=value; Path=/"])

            let deleted = try await server.request("/cookies/delete?k1")
            #expect(deleted.status == 302)
            let cookie = try #require(deleted.header("set-cookie"))
            #expect(cookie.hasPrefix("k1=;"))
            #expect(cookie.contains("Max-Age=0"))
        }
    }

    @Test("/response-headers echoes query pairs as headers and JSON, with a matching Content-Length")
    func responseHeaders() async throws {
        try await TestServer.withRunning { server in
            let response = try await server.request("/response-headers?X-One=1&X-Two=a&X-Two=b")
            #expect(response.header("x-one") == "1")
            #expect(response.headerValues("x-two") == ["a", "b"])
            let json = try #require(response.json)
            #expect(json["X-One"] as? String == "1")
            #expect(json["X-Two"] as? [String] == ["a", "b"])
            #expect(json["Content-Type"] as? String == "application/json")
            #expect(json["Content-Length"] as? String == response.header("content-length"))
            #expect(response.header("content-length") == String(response.body?.count ?? -1))
        }
    }

    @Test("/cache: 200 with validators, 304 when conditional")
    func cache() async throws {
        try await TestServer.withRunning { server in
            let fresh = try await server.request("/cache")
            #expect(fresh.status == 200)
            let etag = try #require(fresh.header("etag"))
            #expect(fresh.header("last-modified") != nil)
            #expect(try await server.request("/cache", headers: [("If-None-Match", etag)]).status == 304)
            #expect(try await server.request("/cache", headers: [("If-Modified-Since", "Sat, 01 Jan 2000 00:00:00 GMT")]).status == 304)
            let maxAge = try await server.request("/cache/60")
            #expect(maxAge.header("cache-control") == "public, max-age=60")
            #expect(maxAge.object("args") != nil)
        }
    }

    @Test("/etag/{etag}: If-None-Match → 304, If-Match mismatch → 412")
    func etag() async throws {
        try await TestServer.withRunning { server in
            let plain = try await server.request("/etag/abc")
            #expect(plain.status == 200)
            #expect(plain.header("etag") == "\"abc\"")
            #expect(try await server.request("/etag/abc", headers: [("If-None-Match", "\"abc\"")]).status == 304)
            #expect(try await server.request("/etag/abc", headers: [("If-None-Match", "\"x\", W/\"abc\"")]).status == 304)
            #expect(try await server.request("/etag/abc", headers: [("If-None-Match", "*")]).status == 304)
            #expect(try await server.request("/etag/abc", headers: [("If-None-Match", "\"other\"")]).status == 200)
            #expect(try await server.request("/etag/abc", headers: [("If-Match", "\"other\"")]).status == 412)
            #expect(try await server.request("/etag/abc", headers: [("If-Match", "\"abc\"")]).status == 200)
        }
    }
}
