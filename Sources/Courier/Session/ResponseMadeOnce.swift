import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NIOHTTP1
import Synchronization

/// The `HTTPURLResponse` of an engine head, made on first use, then the same object: the memo a
/// ``SerializerInput`` needs where there is no task to keep it on (the typed async calls).
///
/// Holds the head and URL itself rather than a closure over them: one allocation per typed
/// call instead of two.
final class ResponseMadeOnce: Sendable {
    private let head: HTTPResponseHead
    private let url: URL
    private let made = Mutex<HTTPURLResponse??>(nil)

    init(head: HTTPResponseHead, url: URL) {
        self.head = head
        self.url = url
    }

    var response: HTTPURLResponse? {
        made.withLock { made in
            if let made { return made }
            let response = ResponseHeadBridge.makeResponse(head, url: url)
            made = .some(response)
            return response
        }
    }
}
