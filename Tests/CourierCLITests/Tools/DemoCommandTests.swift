import Foundation
import Testing

/// `courier demo` run as a subprocess, the way the README's first command runs it.
@Suite struct DemoCommandTests {
    @Test func everyStepDoesWhatItSaysAndTheDemoExitsZero() async throws {
        let run = try await CourierProcess.run(["demo"])
        #expect(run.status == 0, "\(run)")
        let output = run.output
        let expectations = [
            // 1. nested query parameters, encoded, and what the server saw
            "[1] GET with nested query parameters",
            "/get?page=1&user%5Bname%5D=Ada&user%5Btags%5D%5B%5D=x&user%5Btags%5D%5B%5D=y",
            #"✓ 200; the server saw args {"page":"1","user[name]":"Ada","user[tags][]":["x","y"]}"#,
            // 2. JSON echo
            "[2] POST a JSON body",
            "Content-Type: application/json",
            "✓ echoed back as JSON, equal to what was sent",
            // 3. multipart upload, digest confirmed
            "[3] Multipart upload of a generated 64 MiB file",
            "multipart/form-data, 2 parts",
            "equal to the body sent",
            // 4. download task
            "[4] Download task of 64 MiB",
            "✓ 67,108,864 bytes at the destination, every byte the server's a…z pattern",
            // 5. validation errors as a user reads them
            "[5] Responses that fail validation",
            "rejected, as a user sees it: Request failed: client error (418)",
            "rejected, as a user sees it: Request failed: unacceptable content-type: text/html",
            // 6. certificate pinning: the right pin accepted, a wrong pin rejected
            "[6] HTTPS with certificate pinning",
            "pinned: the test CA's intermediate",
            "✓ accepted: 200, the server's chain contains the pinned certificate",
            "pinned: a different, self-signed certificate",
            "✓ rejected: The certificate for this server is invalid",
            "no certificate in the chain matches a pinned certificate",
            // 7. the waterfall
            "[7] Timing waterfall",
            "DNS      |", "connect  |", "TLS      |", "request  |", "wait     |", "download |",
            // 8. images: merged duplicates, the four-download limit, cache hits, the activity indicator
            "[8] A page of images through ImageDownloader",
            "12 receipts share 8 tasks; 4 waiting for a free slot",
            "✓ 8 downloads reached the server for 12 requests: 4 merged into a download already queued or running",
            "✓ every image's size read from its header: 7 png, 3 jpeg, 1 gif, 1 webp, all 16×12",
            "✓ the page again: 12 image-cache hits (success with no response and no receipt), 0 new requests",
            "✓ activity indicator: on, off",
            "All 8 steps did what they said",
        ]
        for expected in expectations {
            #expect(output.contains(expected), "missing \(expected)\n\(run)")
        }
        #expect(!output.contains("FAILED"), "\(run)")
        // Piped, the progress bars print one final line each and never redraw in place.
        #expect(!output.contains("\r"))
        #expect(output.components(separatedBy: "] 100%").count - 1 == 2, "\(run)")
    }

    @Test func sizesAreValidated() async throws {
        let run = try await CourierProcess.run(["demo", "--upload-mib", "0"])
        #expect(run.status != 0)
        #expect(run.errors.contains("--upload-mib and --download-mib must be at least 1"), "\(run)")
    }
}
