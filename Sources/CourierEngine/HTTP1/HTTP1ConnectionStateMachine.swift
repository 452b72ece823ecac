import NIOHTTP1

/// The life of one HTTP/1.1 connection, one request at a time, as pure values.
///
/// The channel handler feeds events in (request started, response parts, body sent, channel
/// closed, errors, timeouts, cancellation) and performs the returned ``Action``. Nothing here
/// touches a channel, so every transition is testable with plain values.
struct HTTP1ConnectionStateMachine {
    enum State: Equatable {
        /// Open, no request: may take one.
        case idle
        /// A request is on the connection.
        case running(RequestState)
        /// The connection is being closed; no more requests.
        case closing
        /// The channel is gone.
        case closed
    }

    struct RequestState: Equatable {
        enum Upload: Equatable {
            /// Head sent with `Expect: 100-continue`; the body waits for `100 Continue`.
            case waitingForContinue
            /// Body chunks are being written.
            case sending
            /// The whole request is on the wire (or no body will be sent).
            case done
        }

        enum Response: Equatable {
            case waitingForHead
            case receivingBody
            case done
        }

        var upload: Upload
        var response: Response = .waitingForHead
        /// The connection must close after this request (request or response said so, or the
        /// request body was abandoned).
        var closeAfter: Bool
        /// Whether any response byte was seen (decides whether a lost connection may be retried).
        var sawResponseBytes = false
        /// Whether the connection had served a request before this one.
        let connectionWasReused: Bool
        /// Interim (1xx) heads seen so far (bounded by ``maximumInterimResponses``).
        var interimResponses = 0
    }

    /// What happens to the connection once a request ends.
    enum Disposition: Equatable {
        /// Clean: give it back to the pool.
        case returnToPool
        /// Close it.
        case close
    }

    enum Action: Equatable {
        case none
        /// Write the request head; write the body too when `sendBody`.
        case sendRequestHead(sendBody: Bool)
        /// `100 Continue` arrived: write the body now.
        case sendBody
        /// Deliver the final response head; when `abandonUpload`, stop writing the body.
        case forwardResponseHead(HTTPResponseHead, abandonUpload: Bool)
        /// Deliver a body chunk (the payload travels beside the action).
        case forwardBodyPart
        /// The request succeeded.
        case succeedRequest(Disposition)
        /// The request failed. `replay`: whether it may be sent again on a new connection (a
        /// reused connection died before any response byte).
        case failRequest(EngineError, Disposition, replay: ReplayEligibility)
        /// Close the channel (no request involved).
        case closeConnection
        /// The connection is gone; tell the pool.
        case connectionClosed
    }

    private(set) var state: State = .idle
    private(set) var requestsServed = 0

    /// Interim (1xx) heads accepted before one request's final head: more is a protocol
    /// violation (a server flooding `100 Continue` or `103 Early Hints` must not keep the
    /// client busy forever). Servers send one or two.
    static let maximumInterimResponses = 16

    /// Whether the pool may hand this connection a request.
    var isIdle: Bool { state == .idle }

    // MARK: - Request side

    mutating func startRequest(hasBody: Bool, expectsContinue: Bool, closeAfter: Bool) -> Action {
        guard case .idle = state else {
            preconditionFailure("startRequest in state \(state)")
        }
        let upload: RequestState.Upload = hasBody ? (expectsContinue ? .waitingForContinue : .sending) : .done
        state = .running(
            RequestState(upload: upload, closeAfter: closeAfter, connectionWasReused: requestsServed > 0)
        )
        return .sendRequestHead(sendBody: upload == .sending)
    }

    /// The last body byte (or the head, for bodiless requests) was written.
    mutating func requestBodySent() -> Action {
        guard case .running(var request) = state else { return .none }
        request.upload = .done
        if request.response == .done {
            return finish(request)
        }
        state = .running(request)
        return .none
    }

    // MARK: - Response side

    mutating func receivedResponseHead(_ head: HTTPResponseHead) -> Action {
        guard case .running(var request) = state else {
            // Bytes nobody asked for: the connection can't be trusted.
            if state == .idle {
                state = .closing
                return .closeConnection
            }
            return .none
        }
        request.sawResponseBytes = true
        if head.status.code >= 100 && head.status.code < 200 && head.status != .switchingProtocols {
            // Interim response: skipped, except that 100 releases a waiting body.
            request.interimResponses += 1
            if request.interimResponses > Self.maximumInterimResponses {
                state = .closing
                return .failRequest(
                    .protocolViolation("more than \(Self.maximumInterimResponses) interim (1xx) responses before the final response"),
                    .close, replay: .none)
            }
            if head.status == .continue, request.upload == .waitingForContinue {
                request.upload = .sending
                state = .running(request)
                return .sendBody
            }
            state = .running(request)
            return .none
        }
        guard request.response == .waitingForHead else {
            state = .closing
            return .failRequest(.protocolViolation("a second response head arrived"), .close, replay: .none)
        }
        request.response = .receivingBody
        if !head.isKeepAlive {
            request.closeAfter = true
        }
        var abandonUpload = false
        if request.upload == .waitingForContinue {
            // The server answered without asking for the body: the body is never sent and the
            // server can't tell where the next request would begin.
            request.upload = .done
            request.closeAfter = true
            abandonUpload = true
        }
        state = .running(request)
        return .forwardResponseHead(head, abandonUpload: abandonUpload)
    }

    mutating func receivedBodyPart() -> Action {
        guard case .running(var request) = state, request.response == .receivingBody else { return .none }
        request.sawResponseBytes = true
        state = .running(request)
        return .forwardBodyPart
    }

    mutating func receivedResponseEnd() -> Action {
        guard case .running(var request) = state else { return .none }
        guard request.response == .receivingBody else {
            // An end after an interim head only: ignore.
            return .none
        }
        request.response = .done
        if request.upload != .done {
            // The server finished before reading the whole body (e.g. 413): stop uploading,
            // deliver the response, and don't reuse the connection.
            request.upload = .done
            request.closeAfter = true
        }
        return finish(request)
    }

    private mutating func finish(_ request: RequestState) -> Action {
        requestsServed += 1
        if request.closeAfter {
            state = .closing
            return .succeedRequest(.close)
        }
        state = .idle
        return .succeedRequest(.returnToPool)
    }

    // MARK: - Failures

    /// An error from the pipeline (decoder, TLS, write failure).
    mutating func errorCaught(_ error: EngineError) -> Action {
        switch state {
        case .running(let request):
            state = .closing
            // A reset or broken pipe on a reused connection before any answer: the server
            // had closed it while it was idle (a lost connection, not a protocol error).
            guard case .connectionLost = error else { return .failRequest(error, .close, replay: .none) }
            return .failRequest(error, .close, replay: Self.replay(after: request))
        case .idle:
            state = .closing
            return .closeConnection
        case .closing, .closed:
            return .none
        }
    }

    /// The channel went inactive.
    mutating func channelInactive() -> Action {
        switch state {
        case .running(let request):
            state = .closed
            return .failRequest(
                .connectionLost(
                    request.sawResponseBytes
                        ? "the server closed the connection before the response was complete"
                        : "the server closed the connection before responding"
                ),
                .close,
                replay: Self.replay(after: request)
            )
        case .idle, .closing:
            state = .closed
            return .connectionClosed
        case .closed:
            return .none
        }
    }

    /// Writing the request head failed: nothing of the request reached the connection. On a
    /// reused connection (the server closed it while it was idle) the request may go again,
    /// whatever its method.
    mutating func requestHeadWriteFailed(_ error: EngineError) -> Action {
        guard case .running(let request) = state else { return .none }
        state = .closing
        return .failRequest(error, .close, replay: request.connectionWasReused && !request.sawResponseBytes ? .unsent : .none)
    }

    /// Whether a request that lost its connection may be sent again: only from a reused
    /// connection, and only before any response byte arrived.
    private static func replay(after request: RequestState) -> ReplayEligibility {
        request.connectionWasReused && !request.sawResponseBytes ? .ifIdempotent : .none
    }

    /// The caller cancelled, or one of the request's clocks ran out.
    mutating func abort(_ error: EngineError) -> Action {
        guard case .running = state else { return .none }
        state = .closing
        return .failRequest(error, .close, replay: .none)
    }

    /// The pool wants this idle connection gone.
    mutating func close() -> Action {
        switch state {
        case .idle:
            state = .closing
            return .closeConnection
        case .running:
            state = .closing
            return .failRequest(.shutDown, .close, replay: .none)
        case .closing, .closed:
            return .none
        }
    }
}
