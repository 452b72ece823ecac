import CourierEngine
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NIOHTTP1

/// A final response head, on the task's callback queue: the session's decisions about it (a
/// redirect followed or refused, a challenge answered, cookies and HSTS learned), then the head
/// becomes the task's response and the body's destination is chosen.
extension TaskDelegate {
    /// Handles the exchange's final head (interim 1xx heads never arrive here).
    func handleHead(_ head: HTTPResponseHead) {
        guard let request = task.currentRequest, let url = request.url else { return }
        eventsHeadReceived(head)
        // Foundation's HTTPURLResponse costs ~3.5 µs per header field to make on Linux: make it
        // only when a hook needs it here; otherwise the task makes it off the event loop.
        // A response a redirect or challenge hook needed for this head (counted on the task).
        var made: HTTPURLResponse?
        func response() -> HTTPURLResponse? {
            if let made { return made }
            let fresh = ResponseHeadBridge.makeResponse(head, url: url)
            if fresh != nil { snapshot.withLock { $0.responsesBuilt += 1 } }
            made = fresh
            return fresh
        }
        // The two blocks a head may call, read together (not a copy of every block).
        let (willRedirect, didReceiveResponse) = environment.hook {
            ($0.taskWillPerformHTTPRedirection, $0.dataTaskDidReceiveResponse)
        }
        let status = Int(head.status.code)
        environment.storeCookies(from: head.headers, for: request, url: url)
        environment.noteStrictTransportSecurity(from: head.headers, url: url)

        // Redirects are the session's job, not the engine's.
        let location = head.headers.first(name: "location")
        let proposal: URLRequest?
        do {
            proposal = try RedirectRule.followed(
                from: request, statusCode: status, location: location,
                maximumRedirects: environment.configuration.maximumRedirects)
        } catch {
            reportEvent(.decision(.redirectRefused(statusCode: status, reason: error.localizedDescription)))
            fail(error)
            return
        }
        if let proposed = proposal {
            let next: URLRequest?
            if let hook = willRedirect, let response = response() {
                next = hook(task, response, proposed)
            } else {
                next = proposed
            }
            if let next {
                if let to = next.url { reportEvent(.decision(.redirectFollowed(statusCode: status, to: to))) }
                run.withLock { $0.machine.redirectDecided(next) }
                return
            }
            reportEvent(.decision(.redirectRefused(statusCode: status, reason: "the redirection block declined it")))
        } else if (300..<400).contains(status), location != nil, environment.configuration.maximumRedirects == 0 {
            reportEvent(.decision(.redirectRefused(statusCode: status, reason: "following redirects is turned off")))
        }

        // 401 with a challenge we can answer: send again with credentials.
        // The `HTTPURLResponse` is made only for a challenge block (its signature takes one).
        if status == 401, let retry = authenticationRetry(for: request, head: head, response: response) {
            let scheme = retry.value(forHTTPHeaderField: "Authorization")?.split(separator: " ").first.map(String.init) ?? "unknown"
            reportEvent(.decision(.authenticationAnswered(statusCode: status, scheme: scheme)))
            run.withLock { $0.machine.authenticationDecided(retry) }
            return
        }

        let expectedLength = ResponseHeadBridge.expectedLength(of: head)
        snapshot.withLock { snapshot in
            snapshot.setResponse(head: head, url: url, made: made)
            snapshot.countOfBytesExpectedToReceive = expectedLength
        }
        progress.update(.download, total: expectedLength, completed: 0, notify: false)
        // From here on the task's own (memoized) response: the hook, the stream and
        // `task.response` all see one object.
        if let dataTask = task as? DataTask, let hook = didReceiveResponse, let response = task.response {
            switch hook(dataTask, response) {
            case .allow: break
            case .cancel: cancel()
            case .becomeDownload: becomeDownload(dataTask)
            }
        }
        switch run.withLock({ $0.machine.receivedFinalHead(expectedLength: expectedLength) }) {
        case .openDownloadFile:
            openDownloadFile(for: head, expectedLength: expectedLength)
        case .deliverHeadToStream:
            if case .stream(let stream) = kind { stream.receiveHead() }  // the head is on the task; no HTTPURLResponse
        case .failBodyTooLarge(let limit, let contentLength):
            fail(.responseBodyTooLarge(url: task.currentRequest?.url, limit: limit, contentLength: contentLength, received: 0))
        case .none:
            break
        }
    }
}
