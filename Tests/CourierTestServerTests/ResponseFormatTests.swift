import CompressNIO
import CourierTestServer
import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import NIOCore
import Testing

@Suite("Response formats: documents, compression, images, base64")
struct ResponseFormatTests {
    @Test("/json is httpbin's slideshow")
    func json() async throws {
        try await TestServer.withRunning { server in
            let response = try await server.request("/json")
            #expect(response.header("content-type") == "application/json")
            let slideshow = try #require(response.object("slideshow"))
            #expect(slideshow["title"] as? String == "Sample Slide Show")
            #expect(slideshow["author"] as? String == "Yours Truly")
            #expect((slideshow["slides"] as? [Any])?.count == 2)
        }
    }

    @Test("/xml parses as XML, /html and /encoding/utf8 are HTML")
    func documents() async throws {
        try await TestServer.withRunning { server in
            let xml = try await server.request("/xml")
            #expect(xml.header("content-type") == "application/xml")
            let parser = XMLParser(data: Data(try #require(xml.body)))
            #expect(parser.parse())
            #expect(parser.parserError == nil)

            let html = try await server.request("/html")
            #expect(html.header("content-type") == "text/html; charset=utf-8")
            #expect(html.bodyText.contains("<h1>Herman Melville - Moby-Dick</h1>"))

            let utf8 = try await server.request("/encoding/utf8")
            #expect(utf8.header("content-type") == "text/html; charset=utf-8")
            #expect(utf8.bodyText.contains("Σὲ γνωρίζω"))
        }
    }

    @Test("/gzip and /deflate are compressed JSON with the right Content-Encoding")
    func compressed() async throws {
        try await TestServer.withRunning { server in
            for (path, algorithm, flag) in [("/gzip", CompressionAlgorithm.gzip(), "gzipped"), ("/deflate", .zlib(), "deflated")] {
                let response = try await server.request(path, headers: [("Accept-Encoding", "gzip, deflate")])
                #expect(response.status == 200)
                #expect(response.header("content-encoding") == String(path.dropFirst()))
                var buffer = ByteBuffer(bytes: try #require(response.body))
                let plain = try buffer.decompress(with: algorithm)
                let object = try #require(try JSONSerialization.jsonObject(with: Data(plain.readableBytesView)) as? [String: Any])
                #expect(object[flag] as? Bool == true)
                #expect(object["method"] as? String == "GET")
                #expect(object["headers"] is [String: Any])
                #expect(object["origin"] as? String == "127.0.0.1")
            }
        }
    }

    @Test(
        "/image/{format} serves a real image of that format",
        arguments: [
            ("png", "image/png", [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] as [UInt8]),
            ("jpeg", "image/jpeg", [0xFF, 0xD8, 0xFF]),
            ("gif", "image/gif", Array("GIF89a".utf8)),
            ("webp", "image/webp", Array("RIFF".utf8)),
            ("svg", "image/svg+xml", Array("<?xml".utf8)),
        ]
    )
    func image(format: String, contentType: String, magic: [UInt8]) async throws {
        try await TestServer.withRunning { server in
            let response = try await server.request("/image/\(format)")
            #expect(response.status == 200)
            #expect(response.header("content-type") == contentType)
            let body = try #require(response.body)
            #expect(body.starts(with: magic))
            switch format {
            case "png":
                // IHDR width and height, big-endian, at offsets 16 and 20.
                #expect(Array(body[16..<24]) == [0, 0, 0, 16, 0, 0, 0, 12])
                #expect(Array(body.suffix(8)) == [0x49, 0x45, 0x4E, 0x44, 0xAE, 0x42, 0x60, 0x82])
            case "gif":
                #expect(Array(body[6..<10]) == [16, 0, 12, 0])
                #expect(body.last == UInt8(ascii: ";"))
            case "jpeg":
                #expect(Array(body.suffix(2)) == [0xFF, 0xD9])
            case "webp":
                #expect(Array(body[8..<12]) == Array("WEBP".utf8))
                let riffSize = Int(body[4]) | Int(body[5]) << 8 | Int(body[6]) << 16 | Int(body[7]) << 24
                #expect(riffSize + 8 == body.count)
            default:
                #expect(String(decoding: body, as: UTF8.self).contains("<svg"))
            }
        }
    }

    @Test("/image picks the format from Accept; unsupported types get 406")
    func imageNegotiation() async throws {
        try await TestServer.withRunning { server in
            let cases: [(String, String?)] = [
                ("image/webp", "image/webp"),
                ("image/svg+xml", "image/svg+xml"),
                ("image/jpeg", "image/jpeg"),
                ("image/png", "image/png"),
                ("image/*", "image/png"),
                ("text/plain", nil),
            ]
            for (accept, expected) in cases {
                let response = try await server.request("/image", headers: [("Accept", accept)])
                if let expected {
                    #expect(response.status == 200)
                    #expect(response.header("content-type") == expected)
                } else {
                    #expect(response.status == 406)
                    #expect(response.string("message") == "Client did not request a supported media type.")
                }
            }
        }
    }

    @Test("/base64/{value} decodes URL-safe base64")
    func base64() async throws {
        try await TestServer.withRunning { server in
            let ok = try await server.request("/base64/SFRUUEJJTiBpcyBhd2Vzb21l")
            #expect(ok.bodyText == "HTTPBIN is awesome")
            let urlSafe = try await server.request("/base64/" + Data("?>?>".utf8).base64EncodedString().replacingOccurrences(of: "/", with: "_"))
            #expect(urlSafe.bodyText == "?>?>")
            let bad = try await server.request("/base64/%%%")
            #expect(bad.bodyText.hasPrefix("Incorrect Base64 data"))
        }
    }
}
