import ArgumentParser

/// What is measured: one workload, several ways of doing it (the variants), compared in the
/// same run.
enum SerializerCase: String, CaseIterable, ExpressibleByArgument, Sendable {
    case queryString = "query-string"
    case jsonParse = "json-parse"
    case multipart = "multipart"
    case percentEscape = "percent-escape"

    /// The variants, Courier's first (ratios are Courier's over each other).
    var variants: [Variant] {
        switch self {
        case .queryString: return [.courier]
        case .jsonParse: return [.courier, .courierRemovingNulls, .jsonSerialization, .jsonDecoderJSONValue, .jsonDecoderTyped]
        case .multipart: return [.requestBody, .inputStream, .rawRead]
        case .percentEscape: return [.courier, .foundation]
        }
    }

    /// The unit of the measured value.
    var unit: String {
        switch self {
        case .queryString: return "ops/s"
        case .jsonParse, .multipart, .percentEscape: return "MB/s"
        }
    }

    /// Timed iterations in one child when `--iterations` is not given.
    var defaultIterations: Int {
        switch self {
        case .queryString: return 7
        case .jsonParse: return 5
        case .multipart: return 3
        case .percentEscape: return 9
        }
    }
}

/// One way of doing a case's work.
enum Variant: String, CaseIterable, ExpressibleByArgument, Sendable {
    /// Courier's API: `queryString(from:)`, `JSONResponseSerializer`, `percentEscaped(_:)`.
    case courier
    /// `JSONResponseSerializer` with `removesKeysWithNullValues`.
    case courierRemovingNulls = "courier-removing-nulls"
    /// `JSONSerialization.jsonObject(with:)` into `Any`.
    case jsonSerialization = "jsonserialization"
    /// `JSONDecoder` into `JSONValue` (its `Codable` conformance): the same tree as Courier's.
    case jsonDecoderJSONValue = "jsondecoder-jsonvalue"
    /// `JSONDecoder` into `Codable` structs that match the document.
    case jsonDecoderTyped = "jsondecoder-typed"
    /// `MultipartFormData.writeBody(intoBuffers:)`: the `ByteBuffer`s `makeRequestBody()` (the
    /// session layer's upload body) hands the engine.
    case requestBody = "request-body"
    /// `MultipartFormData.makeInputStream()` read in 64 KiB reads (AFN's body stream, what a
    /// request's `httpBodyStream` gives the session layer).
    case inputStream = "input-stream"
    /// The same bytes without framing: the file read in 64 KiB chunks into `ByteBuffer`s and
    /// the data parts sliced alike. The floor the framing is measured against.
    case rawRead = "raw-read"
    /// `addingPercentEncoding(withAllowedCharacters:)` with the same allowed set.
    case foundation
}
