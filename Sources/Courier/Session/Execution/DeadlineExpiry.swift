import CourierEngine
import Foundation

/// Where a task was when its deadline (``SessionConfiguration/timeoutIntervalForResource``,
/// the CLI's `--max-time`) ended it: the step of the hop that ran then (read from that hop's
/// metrics) and which hop it was. Its ``reason`` is the ``CourierError/timedOut(url:reason:)``
/// reason, so a user learns whether the time went on the connection, the handshake, the
/// server's answer or a chain of redirects. A plain value, tested as one.
struct DeadlineExpiry: Sendable, Equatable {
    /// The step the hop was in.
    enum Phase: Sendable, Equatable {
        /// Setting up a new connection, at this step.
        case connectionSetup(ConnectionSetupPhase)
        /// Waiting for a connection already open or being opened for another request.
        case waitingForConnection
        /// On a connection, the request sent or being sent, no response head yet.
        case waitingForResponse
        /// Receiving the response's body.
        case receivingResponse
    }

    var phase: Phase
    /// Redirects followed before the hop that ran out of time.
    var redirects: Int
    /// Retries (an interceptor's) made before it.
    var retries: Int

    init(phase: Phase, redirects: Int = 0, retries: Int = 0) {
        self.phase = phase
        self.redirects = redirects
        self.retries = retries
    }

    /// Reads the phase from the metrics of the hop that ran out of time (nil: nothing known,
    /// read as waiting for a connection).
    init(metrics: EngineMetrics?, redirects: Int, retries: Int) {
        let phase: Phase
        if metrics?.responseStart != nil {
            phase = .receivingResponse
        } else if metrics?.requestStart != nil {
            phase = .waitingForResponse
        } else if let setup = metrics?.connectionSetupPhase, setup != .established {
            phase = .connectionSetup(setup)
        } else {
            phase = .waitingForConnection
        }
        self.init(phase: phase, redirects: redirects, retries: retries)
    }

    /// "deadline timeout during the TLS handshake (on redirect 3)": starts with the words
    /// every deadline timeout's reason starts with.
    var reason: String {
        let step: String
        switch phase {
        case .connectionSetup(let setup): step = "during \(setup)"
        case .waitingForConnection: step = "while waiting for a connection"
        case .waitingForResponse: step = "while waiting for the response"
        case .receivingResponse: step = "while receiving the response"
        }
        var hops: [String] = []
        if redirects > 0 { hops.append("redirect \(redirects)") }
        if retries > 0 { hops.append("retry \(retries)") }
        let hop = hops.isEmpty ? "" : " (on \(hops.joined(separator: ", ")))"
        return "\(EngineError.TimeoutKind.deadline.rawValue) timeout \(step)\(hop)"
    }

    /// The task's error: ``CourierError/timedOut(url:reason:)`` with ``reason``.
    func error(url: URL?) -> CourierError {
        .timedOut(url: url, reason: reason)
    }
}
