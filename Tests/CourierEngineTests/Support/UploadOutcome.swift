import Crypto
import Foundation
import NIOCore

/// What an upload to the test server's `/upload` produced, read from a task's recorded events:
/// the progress reports in order, and the byte count and SHA-256 the server computed.
struct UploadOutcome {
    var progress: [Int64]
    var bytes: Int?
    var sha256: String?

    init(_ recorder: EventRecorder) throws {
        var body = ByteBuffer()
        var progress: [Int64] = []
        for event in recorder.all {
            switch event {
            case .bodyPart(var part): body.writeBuffer(&part)
            case .uploadProgress(let sent, _): progress.append(sent)
            default: break
            }
        }
        let json = try JSONSerialization.jsonObject(with: Data(body.readableBytesView)) as? [String: Any]
        self.progress = progress
        bytes = (json?["bytes"] as? NSNumber)?.intValue
        sha256 = json?["sha256"] as? String
    }

    /// The hex SHA-256 of `chunk` repeated `times` times (what the server reports for that body).
    static func sha256(of chunk: ByteBuffer, times: Int) -> String {
        var hasher = SHA256()
        for _ in 0..<times { hasher.update(data: Data(chunk.readableBytesView)) }
        return hasher.finalize().map { String(format: "%02x", $0) }.joined()
    }
}
