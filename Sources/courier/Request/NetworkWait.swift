import Courier
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `--wait-for-network SECONDS`: a request that fails because the network is unreachable waits
/// up to SECONDS (at most `--max-time`) for a route (``ConnectivityRetrier``, reachability for
/// the URL's host), then is sent again once. Idempotent methods only, as the library's default.
/// Stderr says when it waits and when it sends again.
enum NetworkWait {
    /// The session's interceptor with the wait added after `existing` (the body compressor
    /// adapts first); `existing` unchanged without the option.
    /// - Throws: `SecondsOption.InvalidValue` for a value that is not a number of seconds above 0.
    static func interceptor(_ options: NetworkOptions, after existing: (any RequestInterceptor)?) throws -> (any RequestInterceptor)? {
        guard let seconds = options.waitForNetwork else { return existing }
        let requested = try SecondsOption.checked(seconds, option: "--wait-for-network")
        // The wait is no exchange, so the deadline does not end it: --max-time bounds it here.
        let maximumWait = options.maxTime.map { min(requested, $0) } ?? requested
        let retrier = AnnouncingRetrier(
            retrier: ConnectivityRetrier(maximumWait: maximumWait) { task in
                let host = task.currentRequest?.url?.host ?? "the server"
                StandardStreams.writeError("courier: the network is unreachable; waiting up to \(Self.shown(maximumWait)) s for a route to \(host)\n")
            })
        guard let existing else { return retrier }
        return Interceptor([existing, retrier])
    }

    /// Seconds as typed when whole (`20`), else with their fraction (`0.5`).
    static func shown(_ seconds: Double) -> String {
        seconds == seconds.rounded() && seconds < 1e15 ? String(Int64(seconds)) : String(seconds)
    }

    /// The retrier, saying on stderr when the network came back and the request goes again.
    private struct AnnouncingRetrier: RequestInterceptor {
        let retrier: ConnectivityRetrier

        func retry(_ task: SessionTask, dueTo error: any Error, response: HTTPURLResponse?) async -> RetryDecision {
            let decision = await retrier.retry(task, dueTo: error, response: response)
            if case .retry = decision { StandardStreams.writeError("courier: the network is back; sending the request again\n") }
            return decision
        }
    }
}
