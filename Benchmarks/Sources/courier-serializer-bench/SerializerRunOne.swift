import ArgumentParser
import BenchSupport
import Courier
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NIOCore

/// What one child measured: printed as one JSON line on stdout.
struct SerializerReport: Codable, Sendable {
    var benchCase: String
    var variant: String
    /// The median over the timed iterations: ops/s or MB/s (10^6 bytes per second).
    var value: Double
    /// Every timed iteration's value.
    var iterationValues: [Double]
    /// Bytes in (JSON document, string, multipart body); operations per iteration for the
    /// query string.
    var inputBytes: Int64
    /// Bytes out (the query string, the escaped string); 0 when not meaningful.
    var outputBytes: Int64
    /// getrusage user + system over the timed iterations, per operation (µs).
    var cpuMicrosPerOperation: Double
    /// VmHWM at the end, and before the workload's inputs existed (KiB).
    var peakRSSKiB: Int64
    var baselineRSSKiB: Int64
    /// Failed checks; empty when the work was done right.
    var problems: [String]
}

/// `courier-serializer-bench run-one`: one variant of one case in this process, with warm-up
/// and timed iterations; prints a ``SerializerReport`` line. The runner starts one per
/// measurement so that peak RSS belongs to one variant.
struct SerializerRunOne: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run-one",
        abstract: "Run one variant of one case in this process and print a JSON line."
    )

    @Option(name: .customLong("case"), help: "query-string, json-parse, multipart or percent-escape.")
    var benchCase: SerializerCase
    @Option(help: "The variant (see run --help).")
    var variant: Variant
    @Option(help: "Timed iterations (default per case).")
    var iterations: Int?
    @Option(help: "Warm-up iterations before timing.")
    var warmup = 1
    @Option(help: "Keys of the query-string dictionary.")
    var keys = 1_000
    @Option(help: "Size of the JSON document in MB (10^6 bytes).")
    var jsonMB = 10
    @Option(help: "Size of the multipart body in MiB.")
    var mib = 256
    @Option(help: "Size of the percent-escape string in MB.")
    var escapeMB = 1
    @Option(help: "Where the multipart file part lives.")
    var scratch = "/tmp/courier-serializer-bench"

    func run() async throws {
        guard variant.belongs(to: benchCase) else {
            throw ValidationError("\(variant.rawValue) is not a variant of \(benchCase.rawValue)")
        }
        let baseline = ResourceUsage.peakRSSKiB()
        let iterations = max(1, self.iterations ?? benchCase.defaultIterations)
        var report: SerializerReport
        switch benchCase {
        case .queryString: report = try measureQueryString(iterations: iterations)
        case .jsonParse: report = try measureJSON(iterations: iterations)
        case .multipart: report = try await measureMultipart(iterations: iterations)
        case .percentEscape: report = try measurePercentEscape(iterations: iterations)
        }
        report.baselineRSSKiB = baseline
        report.peakRSSKiB = ResourceUsage.peakRSSKiB()
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        print(String(decoding: try encoder.encode(report), as: UTF8.self))
    }

    func makeReport(values: [Double], input: Int64, output: Int64, cpuPerOperation: Double, problems: [String]) -> SerializerReport {
        SerializerReport(
            benchCase: benchCase.rawValue, variant: variant.rawValue, value: median(values), iterationValues: values,
            inputBytes: input, outputBytes: output, cpuMicrosPerOperation: cpuPerOperation,
            peakRSSKiB: 0, baselineRSSKiB: 0, problems: problems)
    }

    /// Times `iterations` runs of `body` after `warmup` untimed ones; returns each run's
    /// seconds and the CPU microseconds of all timed runs.
    func timed(iterations: Int, _ body: () throws -> Void) rethrows -> (seconds: [Double], cpuMicros: Int64) {
        for _ in 0..<warmup { try body() }
        var seconds: [Double] = []
        let before = ResourceUsage.current()
        for _ in 0..<iterations {
            let start = ContinuousClock.now
            try body()
            seconds.append((ContinuousClock.now - start).seconds)
        }
        return (seconds, ResourceUsage.current().cpuMicros - before.cpuMicros)
    }

    // MARK: - Cases

    func measureQueryString(iterations: Int) throws -> SerializerReport {
        let parameters = Workloads.queryParameters(keys: keys)
        let expectedPairs = parameters.values.reduce(0) { $0 + Workloads.leafCount($1) }
        let reference = queryString(from: parameters)
        // Calls per iteration: enough for ~0.2 s, from a short calibration.
        let calibrationStart = ContinuousClock.now
        var calibrationCalls = 0
        while (ContinuousClock.now - calibrationStart).seconds < 0.05 {
            _ = queryString(from: parameters)
            calibrationCalls += 1
        }
        let calls = max(10, calibrationCalls * 4)
        var problems: [String] = []
        var totalBytes = 0
        let (seconds, cpu) = timed(iterations: iterations) {
            for _ in 0..<calls { totalBytes &+= queryString(from: parameters).utf8.count }
        }
        let output = queryString(from: parameters)
        if output != reference { problems.append("queryString(from:) is not deterministic") }
        let pairs = output.split(separator: "&", omittingEmptySubsequences: false).count
        if pairs != expectedPairs { problems.append("\(pairs) pairs written, expected \(expectedPairs)") }
        if totalBytes == 0 { problems.append("no output") }
        return makeReport(
            values: seconds.map { Double(calls) / $0 }, input: Int64(calls), output: Int64(output.utf8.count),
            cpuPerOperation: Double(cpu) / Double(calls * iterations), problems: problems)
    }

    func measureJSON(iterations: Int) throws -> SerializerReport {
        let (document, records) = Workloads.jsonDocument(bytes: jsonMB * 1_000_000)
        guard let url = URL(string: "http://127.0.0.1/json"),
            let response = HTTPURLResponse(
                url: url, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: ["Content-Type": "application/json"])
        else { throw BenchError("cannot make the HTTPURLResponse") }
        let serializer = JSONResponseSerializer(removesKeysWithNullValues: variant == .courierRemovingNulls)
        var problems: [String] = []
        var parsedRecords = -1
        var sawNull = false
        let (seconds, cpu) = try timed(iterations: iterations) {
            switch variant {
            case .courier, .courierRemovingNulls:
                let value = try serializer.responseObject(for: response, data: document)
                parsedRecords = value?["records"]?.arrayValue?.count ?? -1
                sawNull = value?["records"]?[0]?["email"]?.isNull ?? false
            case .jsonSerialization:
                let object = try JSONSerialization.jsonObject(with: document)
                parsedRecords = ((object as? [String: Any])?["records"] as? [Any])?.count ?? -1
            case .jsonDecoderJSONValue:
                let value = try JSONDecoder().decode(JSONValue.self, from: document)
                parsedRecords = value["records"]?.arrayValue?.count ?? -1
            case .jsonDecoderTyped:
                parsedRecords = try JSONDecoder().decode(Workloads.Document.self, from: document).records.count
            default:
                throw BenchError("unreachable variant \(variant.rawValue)")
            }
        }
        if parsedRecords != records { problems.append("parsed \(parsedRecords) records, expected \(records)") }
        if variant == .courier, !sawNull { problems.append("the first record's null email is missing") }
        if variant == .courierRemovingNulls, sawNull { problems.append("removesKeysWithNullValues kept a null") }
        return makeReport(
            values: seconds.map { Double(document.count) / 1e6 / $0 }, input: Int64(document.count), output: 0,
            cpuPerOperation: Double(cpu) / Double(iterations), problems: problems)
    }

    func measureMultipart(iterations: Int) async throws -> SerializerReport {
        let shape = Workloads.MultipartShape(mebibytes: mib)
        let path = try Workloads.multipartFile(directory: scratch, bytes: shape.fileBytes)
        let form = try Workloads.multipartForm(filePath: path, shape: shape)
        let expected = form.contentLength
        let tailExpected = Data("\r\n--\(form.boundary)--\r\n".utf8)
        var problems: [String] = []

        // One pass over the body; returns the byte count and the last bytes seen.
        func pass() async throws -> (Int64, Data) {
            var total: Int64 = 0
            var tail = Data()
            func keepTail(_ chunk: Data) {
                tail.append(chunk.suffix(64))
                if tail.count > 64 { tail = Data(tail.suffix(64)) }
            }
            switch variant {
            case .requestBody:
                try await form.writeBody(intoBuffers: { buffer in
                    // What makeRequestBody() hands the engine's writer.
                    total += Int64(buffer.readableBytes)
                    keepTail(Data(buffer.readableBytesView.suffix(64)))
                })
            case .inputStream:
                let stream = form.makeInputStream()
                stream.open()
                defer { stream.close() }
                var buffer = [UInt8](repeating: 0, count: 64 << 10)
                while true {
                    let count = stream.read(&buffer, maxLength: buffer.count)
                    if count < 0 { throw BenchError("the body stream failed: \(stream.streamError.map { "\($0)" } ?? "?")") }
                    if count == 0 { break }
                    // What the session layer's InputStream body hands the engine's writer.
                    let chunk = ByteBuffer(bytes: buffer[0..<count])
                    total += Int64(chunk.readableBytes)
                    keepTail(Data(buffer[max(0, count - 64)..<count]))
                }
            case .rawRead:
                guard let handle = FileHandle(forReadingAtPath: path) else { throw BenchError("cannot open \(path)") }
                defer { try? handle.close() }
                while let data = try handle.read(upToCount: MultipartFormData.chunkSize), !data.isEmpty {
                    total += Int64(ByteBuffer(bytes: data).readableBytes)
                }
                let part = Data(repeating: UInt8(ascii: "d"), count: 1 << 20)
                for _ in 0..<shape.dataParts {
                    var offset = 0
                    while offset < part.count {
                        let end = min(part.count, offset + MultipartFormData.chunkSize)
                        total += Int64(ByteBuffer(bytes: part[offset..<end]).readableBytes)
                        offset = end
                    }
                }
            default:
                throw BenchError("unreachable variant \(variant.rawValue)")
            }
            return (total, tail)
        }

        for _ in 0..<warmup { _ = try await pass() }
        var seconds: [Double] = []
        var counted: Int64 = 0
        let before = ResourceUsage.current()
        for _ in 0..<iterations {
            let start = ContinuousClock.now
            let (total, tail) = try await pass()
            seconds.append((ContinuousClock.now - start).seconds)
            counted = total
            if variant != .rawRead {
                if total != expected { problems.append("read \(total) bytes, Content-Length is \(expected)") }
                if !tail.suffix(tailExpected.count).elementsEqual(tailExpected) {
                    problems.append("the body does not end with the closing boundary")
                }
            }
        }
        let cpu = ResourceUsage.current().cpuMicros - before.cpuMicros
        if variant == .rawRead, counted != shape.fileBytes + Int64(shape.dataParts << 20) {
            problems.append("read \(counted) raw bytes")
        }
        return makeReport(
            values: seconds.map { Double(counted) / 1e6 / $0 }, input: counted, output: 0,
            cpuPerOperation: Double(cpu) / Double(iterations), problems: Array(Set(problems)).sorted())
    }

    func measurePercentEscape(iterations: Int) throws -> SerializerReport {
        let input = Workloads.mixedUnicodeString(bytes: escapeMB * 1_000_000)
        var output = ""
        var problems: [String] = []
        let (seconds, cpu) = try timed(iterations: iterations) {
            switch variant {
            case .courier: output = percentEscaped(input)
            case .foundation:
                guard let escaped = input.addingPercentEncoding(withAllowedCharacters: Workloads.foundationAllowed) else {
                    throw BenchError("addingPercentEncoding failed")
                }
                output = escaped
            default: throw BenchError("unreachable variant \(variant.rawValue)")
            }
        }
        if output.removingPercentEncoding != input { problems.append("the escaped string does not decode back to the input") }
        if variant == .courier,
            let foundation = input.addingPercentEncoding(withAllowedCharacters: Workloads.foundationAllowed), foundation != output
        {
            problems.append("differs from Foundation's escaping with the same allowed set")
        }
        let inputBytes = input.utf8.count
        return makeReport(
            values: seconds.map { Double(inputBytes) / 1e6 / $0 }, input: Int64(inputBytes), output: Int64(output.utf8.count),
            cpuPerOperation: Double(cpu) / Double(iterations), problems: problems)
    }
}

extension Variant {
    func belongs(to benchCase: SerializerCase) -> Bool { benchCase.variants.contains(self) }
}
