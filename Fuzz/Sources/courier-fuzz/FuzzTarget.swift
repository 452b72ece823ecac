/// The fuzz targets: each feeds arbitrary bytes to one parser and checks what must hold for any
/// input (no trap, and where there is a round trip, that it holds).
enum FuzzTarget: String, CaseIterable {
    case response = "response"
    case json = "json"
    case queryString = "query-string"
    case multipart = "multipart"
    case setCookie = "set-cookie"
    case wwwAuthenticate = "www-authenticate"
    case certificate = "certificate"
    case resumeData = "resume-data"
    case baseURL = "base-url"

    func run(_ bytes: [UInt8]) {
        switch self {
        case .response: ResponseParserFuzzing.run(bytes)
        case .json: JSONFuzzing.run(bytes)
        case .queryString: QueryStringFuzzing.run(bytes)
        case .multipart: MultipartFuzzing.run(bytes)
        case .setCookie: SetCookieFuzzing.run(bytes)
        case .wwwAuthenticate: AuthenticateHeaderFuzzing.run(bytes)
        case .certificate: CertificateFuzzing.run(bytes)
        case .resumeData: ResumeDataFuzzing.run(bytes)
        case .baseURL: BaseURLFuzzing.run(bytes)
        }
    }
}

/// Stops the fuzzer with a message when an invariant breaks (libFuzzer saves the input).
func invariant(_ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String) {
    if !condition() { fatalError("invariant broken: \(message())") }
}
