import Foundation
import HTTPTypes
import NIOHTTP1
import Synchronization

/// A final response head behind ``HTTPTypesResponse``: the status is read from the engine's
/// head when the response is made, the `HTTPFields` (a validated name and a value per field)
/// only on the first read of the fields or the whole `HTTPResponse`, then kept. A caller that
/// reads only the status, as most typed calls do, pays for no field.
final class LazyResponseHead: Sendable {
    /// The response's status, with its reason phrase.
    let status: HTTPResponse.Status
    /// The engine's head, until the fields are made from it (nil when made from a response).
    private let head: HTTPResponseHead?
    private let made: Mutex<HTTPResponse?>
    /// How many times the fields were made from the head (tests: at most once).
    let timesBuilt = Atomic<Int>(0)

    /// - Throws: ``CourierError/connectionLost(url:reason:)`` for a status outside 0...999
    ///   (checked now, as before: the fields are the only part made later).
    init(_ head: HTTPResponseHead, url: borrowing URL?) throws {
        self.status = try ResponseHeadBridge.httpStatus(head, url: url)
        self.head = head
        self.made = Mutex(nil)
    }

    init(_ response: HTTPResponse) {
        self.status = response.status
        self.head = nil
        self.made = Mutex(response)
    }

    /// The whole response, its fields made on first use.
    var response: HTTPResponse {
        made.withLock { made in
            if let made { return made }
            let fresh = HTTPResponse(status: status, headerFields: head.map(ResponseHeadBridge.httpFields) ?? [:])
            timesBuilt.add(1, ordering: .relaxed)
            made = fresh
            return fresh
        }
    }
}
