import BenchSupport

/// Every accepted round of one case.
struct CaseSummary: Sendable {
    var benchCase: WSCase
    var url: String
    var rounds: AcceptedRounds<[WSClientKind: Measurement]>
    var clients: [WSClientKind]
}
