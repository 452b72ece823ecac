// libFuzzer's entry point. One binary holds every target; `COURIER_FUZZ_TARGET` picks one
// (`scripts/fuzz.sh TARGET SECONDS` sets it). Only declarations here: libFuzzer supplies `main`.
import Foundation

/// The target named by `COURIER_FUZZ_TARGET`, looked up once.
let selectedTarget: FuzzTarget = {
    let name = ProcessInfo.processInfo.environment["COURIER_FUZZ_TARGET"] ?? ""
    guard let target = FuzzTarget(rawValue: name) else {
        let names = FuzzTarget.allCases.map(\.rawValue).joined(separator: ", ")
        FileHandle.standardError.write(Data("COURIER_FUZZ_TARGET must be one of: \(names)\n".utf8))
        exit(2)
    }
    return target
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func courierFuzzOneInput(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let bytes = [UInt8](UnsafeRawBufferPointer(start: start, count: count))
    selectedTarget.run(bytes)
    return 0
}
