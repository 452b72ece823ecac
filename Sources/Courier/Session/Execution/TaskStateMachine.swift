import CourierEngine
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The life of one session task, as pure values, in the engine's decide/execute style (see
/// `HTTP1ConnectionStateMachine`): ``TaskDelegate`` feeds events in (resume, suspend, cancel,
/// the exchange started, a response head was judged, a body chunk, the exchange ended, a
/// reason to pause reading came or went, completion) and performs the returned action outside
/// any decision. Nothing here touches an engine, a file, a hook or a lock, so every transition
/// is tested with plain values (`TaskStateMachineTests`).
///
/// What it decides: the public state (suspended, running, canceling, completed), what the
/// exchange in flight leads to (deliver its response, follow a redirect, answer a challenge),
/// how many redirects were followed, whether a body chunk is kept and where it goes (memory,
/// a stream, the download file), the response body size limit, that the download file is
/// opened once, that resume data is asked for once, when reading is paused, and that the task
/// completes exactly once. What it leaves to its own rule files: which redirect to follow
/// (``RedirectRule``), which challenge to answer and how (``AuthenticationAttempts``,
/// ``DigestAuthenticator``), how a resumed download's response is judged (``ResumeResponseRule``).
struct TaskStateMachine {
    /// The task as a whole.
    enum State: Equatable {
        /// Created and never resumed, or suspended by the caller.
        case suspended
        /// Transferring the response that will be delivered.
        case running
        /// Draining a redirect's body; the next request goes out when it ends.
        case redirecting
        /// Draining a 401's body; the answer goes out when it ends.
        case authenticating
        /// Cancelled; the completion is on its way.
        case cancelling
        /// Completion claimed: nothing more happens.
        case completed
    }

    /// What the exchange in flight leads to once it ends.
    enum Hop {
        /// Its response is the task's: the body is kept, the end completes the task.
        case delivering
        /// A redirect was decided: the body is discarded, then `next` is sent.
        case redirecting(URLRequest)
        /// A 401 is being answered: the body is discarded, then `retry` is sent.
        case authenticating(URLRequest)
    }

    /// Where the body of the delivered response goes.
    enum BodyDestination: Equatable {
        /// Gathered in memory for the serializer (data and upload tasks).
        case memory
        /// Handed to a ``ResponseBodyStream``.
        case stream
        /// Written to the download file.
        case file
    }

    /// The download file, for a task whose body goes to a file.
    enum DownloadFile: Equatable {
        /// No final head yet.
        case notOpened
        /// Opened when the head arrived: chunks are written to it.
        case open
        /// A resumed download whose partial file already held the whole resource (416).
        case alreadyComplete
        /// It could not be opened, or the response was refused: chunks are dropped.
        case failed
    }

    /// What can hold reading the response back; reading restarts when none does.
    enum ReadingPause: Hashable {
        /// The task's callback queue has too much body waiting.
        case callbackQueue
        /// A ``ResponseBodyStream`` consumer is behind.
        case stream
    }

    // MARK: - Actions

    enum ResumeAction: Equatable {
        case none
        /// First resume: report it, then send the request.
        case start
        /// Resumed after a suspend: report it, then resume the exchange (if any).
        case resumeExchange
        /// First resume of a task made after its session was invalidated: complete it with
        /// ``CourierError/cancelled(url:)``.
        case failInvalidated
    }

    enum CancelAction: Equatable {
        case none
        /// Cancel the exchange; its end completes the task.
        case cancelExchange
        /// No exchange to cancel: complete with ``CourierError/cancelled(url:)`` now.
        case completeCancelled
    }

    /// What to do with the engine task just handed over.
    struct ExchangeStartAction: Equatable {
        /// Cancel it at once (the task was cancelled, or failed, before it existed).
        var cancel: Bool
        /// Pause it (the task was suspended before it existed).
        var pause: Bool
    }

    enum ReadingAction: Equatable {
        case none
        case pauseReading
        case resumeReading
    }

    enum HeadAction: Equatable {
        case none
        /// Open the download file for this head (once per task).
        case openDownloadFile
        /// Hand the response to the task's ``ResponseBodyStream``.
        case deliverHeadToStream
        /// `Content-Length` is over the limit: fail with
        /// ``CourierError/responseBodyTooLarge(url:limit:contentLength:received:)``.
        case failBodyTooLarge(limit: Int64, contentLength: Int64)
    }

    enum BodyAction: Equatable {
        /// A redirect's or 401's body, a download that is complete or failing, a task over
        /// its limit: dropped.
        case discard
        /// Append to the gathered body. `received`: body bytes so far.
        case gather(received: Int64)
        /// Append to the stream.
        case stream(received: Int64)
        /// Write to the download file.
        case write(received: Int64)
        /// The gathered body went over the limit: fail with
        /// ``CourierError/responseBodyTooLarge(url:limit:contentLength:received:)``.
        case failBodyTooLarge(limit: Int64, received: Int64)
    }

    /// How a task ends, in values the executor turns into the reported error.
    enum Ending {
        /// This error, as it is.
        case error(CourierError)
        /// ``CourierError/cancelled(url:)`` for the current request's URL.
        case cancelled
        /// The engine's failure, mapped with the current request's URL.
        case engine(EngineError)

        /// The error a task ending this way reports; `url` is its current request's.
        func reportedError(url: URL?) -> CourierError {
            switch self {
            case .error(let error): return error
            case .cancelled: return .cancelled(url: url)
            case .engine(let error): return CourierError(error, url: url)
            }
        }
    }

    enum EndAction {
        /// Complete the task. `withResponse`: whether the last response head counts (not after
        /// a failed redirect or retry); `ending` nil is success.
        case complete(withResponse: Bool, ending: Ending?)
        /// Send `request` as the next hop (a redirect or an answered challenge): make sure the
        /// body can be sent again, then send.
        case sendNextHop(URLRequest)
    }

    // MARK: - State

    /// What the caller sees (``SessionTask/state``).
    private(set) var lifecycle: SessionTask.State = .suspended
    /// Whether the task was ever resumed (it may hold a connection).
    private(set) var started = false
    /// Whether the completion was claimed.
    private(set) var completed = false
    /// Whether an engine task is in flight for the current hop.
    private(set) var hasExchange = false
    private(set) var hop: Hop = .delivering
    /// Redirects followed so far.
    private(set) var redirects = 0
    /// The task was cancelled, or a failure of its own asked the exchange to stop.
    private(set) var cancelRequested = false
    /// A failure found by the session itself (a download file that can't be written, a body
    /// over the limit); it wins over the engine's cancellation error.
    private(set) var failure: CourierError?
    private(set) var destination: BodyDestination
    private(set) var downloadFile: DownloadFile = .notOpened
    /// Whether ``DownloadTask/cancel(byProducingResumeData:)`` was accepted.
    private(set) var resumeDataRequested = false
    /// Who asks for reading to be paused (one engine flag, several reasons).
    private(set) var readingPausedBy: Set<ReadingPause> = []
    /// Body bytes received in this hop (from the resume offset for a resumed download).
    private(set) var received: Int64 = 0

    /// The most redirects followed (``SessionConfiguration/maximumRedirects``).
    let maximumRedirects: Int
    /// The largest body gathered in memory (``SessionConfiguration/maximumResponseBodySize``).
    let maximumBodySize: Int64?

    init(destination: BodyDestination, maximumRedirects: Int, maximumBodySize: Int64?) {
        self.destination = destination
        self.maximumRedirects = maximumRedirects
        self.maximumBodySize = maximumBodySize
    }

    /// The task as a whole.
    var state: State {
        if completed || lifecycle == .completed { return .completed }
        switch lifecycle {
        case .canceling: return .cancelling
        case .suspended: return .suspended
        default: break
        }
        switch hop {
        case .delivering: return .running
        case .redirecting: return .redirecting
        case .authenticating: return .authenticating
        }
    }

    /// Whether the body goes to a file (a download task, or a data task that became one).
    var isDownload: Bool { destination == .file }

    // MARK: - Control

    /// `hasRequest`: the task still has a request (false once its session was invalidated).
    mutating func resume(hasRequest: Bool) -> ResumeAction {
        guard lifecycle == .suspended else { return .none }
        lifecycle = .running
        if started { return .resumeExchange }
        started = true
        return hasRequest ? .start : .failInvalidated
    }

    /// True: pause the exchange (if any) and report the suspension.
    mutating func suspend() -> Bool {
        guard lifecycle == .running else { return false }
        lifecycle = .suspended
        return true
    }

    mutating func cancel() -> CancelAction {
        guard lifecycle != .completed, lifecycle != .canceling else { return .none }
        lifecycle = .canceling
        cancelRequested = true
        return hasExchange ? .cancelExchange : .completeCancelled
    }

    /// ``DownloadTask/cancel(byProducingResumeData:)``: true when accepted (then cancel); false
    /// when the task already completed or resume data was already asked for (the handler gets nil).
    mutating func requestResumeData() -> Bool {
        guard !completed, !resumeDataRequested else { return false }
        resumeDataRequested = true
        return true
    }

    /// The challenge block answered ``ChallengeDisposition/cancel``: the 401 is delivered and
    /// the task ends cancelled.
    mutating func challengeCancelled() {
        cancelRequested = true
    }

    // MARK: - Exchange

    /// An engine task was handed over for the current hop.
    mutating func exchangeStarted() -> ExchangeStartAction {
        hasExchange = true
        return ExchangeStartAction(cancel: cancelRequested, pause: lifecycle == .suspended)
    }

    /// A reason to hold reading back came (`paused`) or went. Reading restarts only when no
    /// reason is left and the caller has not suspended the task. The executor applies the
    /// action before it lets go of the lock, so two reasons changing at once can't leave
    /// reading running while one still holds it back.
    mutating func setReadingPaused(_ paused: Bool, by reason: ReadingPause) -> ReadingAction {
        if paused {
            readingPausedBy.insert(reason)
            return hasExchange ? .pauseReading : .none
        }
        readingPausedBy.remove(reason)
        guard readingPausedBy.isEmpty, lifecycle != .suspended, hasExchange else { return .none }
        return .resumeReading
    }

    /// The executor decided (``RedirectRule`` and the redirect block) to follow this redirect.
    mutating func redirectDecided(_ next: URLRequest) {
        hop = .redirecting(next)
    }

    /// The executor decided to answer the 401 with `retry`.
    mutating func authenticationDecided(_ retry: URLRequest) {
        hop = .authenticating(retry)
    }

    /// The head that will be delivered arrived (after the did-receive-response block, which may
    /// have made the task a download). `expectedLength`: `Content-Length`, -1 when unknown.
    mutating func receivedFinalHead(expectedLength: Int64) -> HeadAction {
        hop = .delivering
        switch destination {
        case .file:
            guard downloadFile == .notOpened else { return .none }
            return .openDownloadFile
        case .stream:
            return .deliverHeadToStream
        case .memory:
            if let limit = maximumBodySize, expectedLength > limit {
                return .failBodyTooLarge(limit: limit, contentLength: expectedLength)
            }
            return .none
        }
    }

    /// The did-receive-response block made the data task a download task.
    mutating func becameDownload() {
        destination = .file
    }

    /// The download file is open; `resumedAt` is where writing starts for a resumed download
    /// (the received count starts there), nil for a new file.
    mutating func downloadFileOpened(resumedAt offset: Int64?) {
        downloadFile = .open
        if let offset { received = offset }
    }

    /// The resumed download's partial file is already the whole resource (416).
    mutating func downloadAlreadyComplete() {
        downloadFile = .alreadyComplete
    }

    /// The session found a failure of its own (a download file refused or not writable, a body
    /// over the limit): it becomes the task's error and the exchange stops. True: cancel the
    /// exchange now (false: there is none yet; ``exchangeStarted()`` cancels it).
    mutating func fail(_ error: CourierError) -> Bool {
        if failure == nil { failure = error }
        if destination == .file, downloadFile == .notOpened { downloadFile = .failed }
        cancelRequested = true
        return hasExchange
    }

    /// A chunk of `count` body bytes arrived.
    mutating func receivedBodyChunk(count: Int) -> BodyAction {
        guard case .delivering = hop else { return .discard }
        if destination == .file && downloadFile != .open { return .discard }
        if failure != nil { return .discard }
        received += Int64(count)
        switch destination {
        case .stream:
            return .stream(received: received)
        case .file:
            return .write(received: received)
        case .memory:
            if let limit = maximumBodySize, received > limit { return .failBodyTooLarge(limit: limit, received: received) }
            return .gather(received: received)
        }
    }

    /// The exchange ended: with `error`, or cleanly.
    mutating func exchangeEnded(error: EngineError?) -> EndAction {
        hasExchange = false
        let ended = hop
        hop = .delivering
        if let error {
            let ending: Ending = failure.map { .error($0) } ?? (cancelRequested ? .cancelled : .engine(error))
            return .complete(withResponse: true, ending: ending)
        }
        switch ended {
        case .delivering:
            // A failure found here (a body over the limit) wins even when the exchange
            // managed to finish before its cancellation took effect.
            return .complete(withResponse: true, ending: failure.map { .error($0) })
        case .redirecting(let next):
            redirects += 1
            if redirects > maximumRedirects {
                return .complete(
                    withResponse: false, ending: .error(.tooManyRedirects(url: next.url, limit: maximumRedirects)))
            }
            return nextHop(next)
        case .authenticating(let retry):
            return nextHop(retry)
        }
    }

    private mutating func nextHop(_ next: URLRequest) -> EndAction {
        if cancelRequested {
            return .complete(withResponse: false, ending: .error(.cancelled(url: next.url)))
        }
        received = 0
        return .sendNextHop(next)
    }

    /// An interceptor decided to send the request again after the exchange ended (see
    /// `InterceptedExchange`): the next attempt starts with no body bytes counted, and a
    /// download's next head opens a new file (the session drops the attempt's file). False: the
    /// task was cancelled or completed meanwhile (that path completes it), so nothing is sent.
    mutating func retryDecided() -> Bool {
        guard !cancelRequested, !completed, failure == nil else { return false }
        received = 0
        if destination == .file { downloadFile = .notOpened }
        return true
    }

    // MARK: - Completion

    /// Claims the completion: true exactly once. Afterwards no exchange is in flight.
    mutating func claimCompletion() -> Bool {
        guard !completed else { return false }
        completed = true
        hasExchange = false
        return true
    }

    /// The completion was delivered (the task's public state becomes completed).
    mutating func finished() {
        lifecycle = .completed
    }
}
