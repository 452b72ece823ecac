import Courier
import Foundation

/// `--har FILE`: a ``HARRecorder`` on the call's session, written when the call ends (also when
/// it failed: the archive then shows how far it got).
struct HAROutput {
    let recorder: HARRecorder
    let path: String

    /// The recorder `options` ask for, attached to `manager`; nil without `--har`.
    /// - Throws: ``RequestBuildError`` for an empty path, or `--har-include-secrets` alone.
    static func attach(_ options: OutputOptions, to manager: URLSessionManager) throws -> HAROutput? {
        guard let path = options.har else {
            if options.harIncludeSecrets { throw RequestBuildError(description: "--har-include-secrets needs --har FILE") }
            return nil
        }
        guard !path.isEmpty else { throw RequestBuildError(description: "--har needs a file name") }
        let recorder = HARRecorder(redaction: options.harIncludeSecrets ? nil : .default)
        manager.addEventMonitor(recorder)
        return HAROutput(recorder: recorder, path: path)
    }

    /// Writes the archive (`-` is standard output); a failure to write is reported on stderr.
    func write() {
        do {
            let data = try recorder.jsonData()
            if path == "-" {
                StandardStreams.writeOutput(data + Data("\n".utf8))
            } else {
                try data.write(to: URL(fileURLWithPath: path), options: .atomic)
            }
        } catch {
            StandardStreams.writeError(Data("courier: warning: the HAR file \(path) could not be written: \(error.localizedDescription)\n".utf8))
        }
    }
}
