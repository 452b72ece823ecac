import Courier
import Foundation

/// Resume data from outside (a file, a database): decoding arbitrary bytes never traps, and
/// whatever decodes encodes back to something that decodes to the same value.
enum ResumeDataFuzzing {
    static func run(_ bytes: [UInt8]) {
        guard let resumeData = try? DownloadResumeData(encoded: Data(bytes)) else { return }
        guard let encoded = try? resumeData.encoded() else {
            invariant(false, "decoded resume data does not encode")
            return
        }
        invariant((try? DownloadResumeData(encoded: encoded)) == resumeData, "resume data round trip")
    }
}
