// `courier-https`: `courier` with https as the default scheme, as HTTPie's `https` is `http`'s.
// It runs the `courier` executable installed beside it, named `courier-https` (argv[0]), which
// `courier` reads as `--default-scheme https`. An installed link named `courier-https` to
// `courier` does the same without this program.
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The directory this executable is in (`/proc/self/exe` on Linux, else argv[0]'s).
func ownDirectory() -> String {
    var buffer = [CChar](repeating: 0, count: 4096)
    let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
    let path: String
    if count > 0 {
        path = String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    } else {
        path = CommandLine.arguments.first ?? "."
    }
    guard let slash = path.lastIndex(of: "/") else { return "." }
    return String(path[..<slash])
}

let courier = ownDirectory() + "/courier"
var arguments = ["courier-https"] + CommandLine.arguments.dropFirst()
var cArguments: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) }
cArguments.append(nil)
execv(courier, cArguments)
let message = "courier-https: cannot run \(courier): \(String(cString: strerror(errno)))\n"
_ = message.withCString { write(2, $0, strlen($0)) }
exit(1)
