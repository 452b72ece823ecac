import Courier
import CourierTestServer
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// One `ImageDownloader` shared by several users (a server process): a request carrying
/// `Authorization`, `Cookie`, `Proxy-Authorization` or a token field (`X-Api-Key`,
/// `X-Auth-Token`, `X-Amz-Security-Token`) never shares an image with a request
/// carrying other values (or none), neither from the image cache nor by merging into another
/// user's download; requests without them keep AFN's exact key and sharing.
@Suite struct ImageCredentialIsolationTests {
    let recorder = ImageCallbackRecorder()
    static let url = URL(string: "http://test.com/image")!  // a literal

    static func request(_ url: URL, _ field: String? = nil, _ value: String? = nil) -> URLRequest {
        var request = URLRequest(url: url)
        if let field, let value { request.setValue(value, forHTTPHeaderField: field) }
        return request
    }

    static func key(_ request: URLRequest, _ identifier: String? = nil) -> String {
        AutoPurgingImageCache.imageCacheKey(for: request, withAdditionalIdentifier: identifier)
    }

    @Test func aPlainRequestKeepsAFNsKey() {
        #expect(Self.key(Self.request(Self.url)) == "http://test.com/image")
        #expect(Self.key(Self.request(Self.url), "filter") == "http://test.com/imagefilter")
        // Other headers do not name a user: still AFN's key.
        #expect(Self.key(Self.request(Self.url, "Accept", "image/png")) == "http://test.com/image")
    }

    @Test(arguments: ["Authorization", "Cookie", "Proxy-Authorization", "X-Api-Key", "X-Auth-Token", "X-Amz-Security-Token"])
    func credentialsKeyApartWithoutTheirValue(field: String) {
        let alice = Self.key(Self.request(Self.url, field, "Bearer alice-secret"), "filter")
        let bob = Self.key(Self.request(Self.url, field, "Bearer bob-secret"), "filter")
        #expect(alice != bob)
        #expect(alice != Self.key(Self.request(Self.url), "filter"))
        #expect(alice == Self.key(Self.request(Self.url, field.lowercased(), "Bearer alice-secret"), "filter"))
        #expect(alice.hasPrefix("http://test.com/imagefilter"))
        #expect(!alice.contains("alice-secret") && !alice.contains("Bearer"))
        // The same value in another credential field is another scope.
        let other = field == "Cookie" ? "Authorization" : "Cookie"
        #expect(alice != Self.key(Self.request(Self.url, other, "Bearer alice-secret"), "filter"))
    }

    @Test func theCacheKeepsOneImagePerUser() {
        let cache = AutoPurgingImageCache(purgesOnMemoryPressure: false)
        let gif = { (width: UInt16) in Image(data: Data(ImagePerUserServer.gif(width: width)))! }  // a literal
        cache.add(gif(2), for: Self.request(Self.url, "Authorization", "alice"), withAdditionalIdentifier: nil)
        #expect(cache.image(for: Self.request(Self.url, "Authorization", "bob"), withAdditionalIdentifier: nil) == nil)
        #expect(cache.image(for: Self.request(Self.url), withAdditionalIdentifier: nil) == nil)
        #expect(cache.image(for: Self.request(Self.url, "Authorization", "alice"), withAdditionalIdentifier: nil) == gif(2))
    }

    @Test(arguments: ["Authorization", "Cookie", "X-Api-Key", "X-Auth-Token", "X-Amz-Security-Token"])
    func anotherUserDoesNotGetTheCachedImage(field: String) async throws {
        try await ImagePerUserServer.withRunning(widths: ["alice": 2, "bob": 3]) { server in
            let downloader = ImageDownloaderTests.makeDownloader()
            func fetch(_ value: String?, tag: String) async throws -> (HTTPURLResponse?, Image)? {
                _ = downloader.downloadImage(
                    for: Self.request(server.url, field, value), success: recorder.success(tag), failure: recorder.failure(tag))
                try await eventually { recorder.event(tag) != nil }
                guard case .success(_, let response, let image) = recorder.event(tag) else {
                    Issue.record("\(tag): \(String(describing: recorder.event(tag)))")
                    return nil
                }
                return (response, image)
            }
            let alice = try await fetch("alice", tag: "alice")
            #expect(alice?.0 != nil && alice?.1.pixelWidth == 2)
            let bob = try await fetch("bob", tag: "bob")
            #expect(bob?.0 != nil && bob?.1.pixelWidth == 3)
            let anonymous = try await fetch(nil, tag: "anonymous")
            #expect(anonymous?.0 != nil && anonymous?.1.pixelWidth == 1)
            // Each user's own image still comes from the cache (a nil response, nothing sent).
            let aliceAgain = try await fetch("alice", tag: "alice-again")
            #expect(aliceAgain?.0 == nil && aliceAgain?.1.pixelWidth == 2)
            let anonymousAgain = try await fetch(nil, tag: "anonymous-again")
            #expect(anonymousAgain?.0 == nil && anonymousAgain?.1.pixelWidth == 1)
            #expect(server.requestCredentials == ["alice", "bob", nil])
        }
    }

    @Test(arguments: ["Authorization", "X-Api-Key"])
    func anotherUserIsNotMergedIntoADownloadInFlight(field: String) async throws {
        try await TestServer.withRunning { blockingServer in
            try await ImagePerUserServer.withRunning(widths: ["alice": 2, "bob": 3, "carol": 4]) { server in
                // One slot, held by a request that is never answered: the others queue behind it.
                let downloader = ImageDownloaderTests.makeDownloader(maximumActiveDownloads: 1)
                let blocker = try #require(
                    downloader.downloadImage(
                        for: URLRequest(url: blockingServer.sessionURL("/fault/no-response")), success: recorder.success("blocker"),
                        failure: recorder.failure("blocker")))
                func download(_ user: String?, tag: String) throws -> ImageDownloadReceipt {
                    try #require(
                        downloader.downloadImage(
                            for: Self.request(server.url, field, user), success: recorder.success(tag),
                            failure: recorder.failure(tag)))
                }
                let alice = try download("alice", tag: "alice")
                let bob = try download("bob", tag: "bob")
                let aliceAgain = try download("alice", tag: "alice-again")
                let carol = try download("carol", tag: "carol")
                let anonymous = try download(nil, tag: "anonymous")
                #expect(alice.task === aliceAgain.task)
                #expect(alice.task !== bob.task && alice.task !== carol.task && alice.task !== anonymous.task)
                #expect(bob.task !== carol.task && bob.task !== anonymous.task)
                #expect(downloader.queuedDownloadCount == 4)
                // Cancelling carol's receipt cancels carol's download only.
                downloader.cancelTask(for: carol)
                #expect(downloader.queuedDownloadCount == 3)
                downloader.cancelTask(for: blocker)
                try await eventually { recorder.events.count == 6 }
                #expect(recorder.isCancelled("blocker") && recorder.isCancelled("carol"))
                for (tag, width) in [("alice", 2), ("alice-again", 2), ("bob", 3), ("anonymous", 1)] {
                    guard case .success(_, let response, let image) = recorder.event(tag) else {
                        Issue.record("\(tag): \(String(describing: recorder.event(tag)))")
                        continue
                    }
                    #expect(response != nil && image.pixelWidth == width, "\(tag)")
                }
                #expect(server.requestCredentials == ["alice", "bob", nil])
                try await eventually { downloader.activeDownloadCount == 0 }
            }
        }
    }
}
