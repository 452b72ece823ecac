import Courier
import CourierEngine
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// How data items become a body: HTTPie's `--json` (the default), `--form` and `--multipart`.
enum BodyMode: Equatable {
    case json
    case form
    case multipart
}

/// A request ready to run: a plain `URLRequest` (body in `httpBody`), a multipart request
/// whose body is streamed from its form, or a request whose body is streamed from a file.
struct PreparedRequest {
    var urlRequest: URLRequest
    var multipart: MultipartRequest?
    /// `@file`: the file the body is streamed from (never read into memory), and its length.
    var bodyFile: (url: URL, length: Int64)?
    /// A piped stdin read while it is sent: with `--chunked`, or with a `Content-Length:N`
    /// item (then `standardInputLength`), as HTTPie streams it.
    var streamsStandardInput = false
    /// The length a `Content-Length` item announced for a streamed stdin.
    var standardInputLength: Int64?
}

/// A request that can't be built from the command line; `courier` exits with status 2.
struct RequestBuildError: Error, CustomStringConvertible {
    var description: String
}

/// Turns the parsed command line into a request with Courier's serializers: JSON fields
/// through `JSONRequestSerializer`, form fields through `HTTPRequestSerializer`, files through
/// `multipartFormRequest`; query items appended with `percentEscaped`; headers applied last.
struct RequestBuilder {
    static let jsonAccept = "application/json, */*;q=0.5"

    var arguments: RequestArguments
    var mode: BodyMode = .json
    /// `--json` given explicitly: JSON headers even without data fields.
    var jsonExplicit = false
    var basicAuth: (user: String, password: String)?
    var bearerToken: String?
    /// `--timeout`: the request's idle timeout (a request's own interval wins over the session's).
    var timeout: Double?
    /// The body from stdin or `--raw`, and where it came from (for messages): it excludes data
    /// items, and makes the method POST when none is given.
    var rawBody: (data: Data, source: String)?
    /// Headers sent unless an item sets the same name (a session's).
    var defaultHeaders: [(name: String, value: String)] = []

    func build() throws -> PreparedRequest {
        let url = try urlWithQuery()
        let items = arguments.items
        if let rawBody {
            guard !items.contains(where: \.isData) else {
                throw RequestBuildError(description: StandardInputBody.mixedMessage(source: rawBody.source))
            }
            var request = try rawBodyRequest(method: arguments.method ?? "POST", url: url, body: rawBody.data)
            try applyHeaders(to: &request)
            return PreparedRequest(urlRequest: request, multipart: nil)
        }
        let method = arguments.effectiveMethod
        let fields = items.filter { if case .fileField = $0 { return false } else { return $0.isData } }
        let hasFiles = items.contains { if case .fileField = $0 { return true } else { return false } }
        let bodyFiles = items.compactMap { item -> String? in
            if case .bodyFile(let path) = item { return path } else { return nil }
        }
        if !bodyFiles.isEmpty && (bodyFiles.count > 1 || fields.count > bodyFiles.count || hasFiles) {
            throw RequestBuildError(description: "'@file' is the whole body: it can't be combined with other data items")
        }
        var prepared: PreparedRequest
        if let path = bodyFiles.first {
            let file = try Self.regularFile(path)
            prepared = PreparedRequest(
                urlRequest: try bodyFileRequest(method: method, url: url, path: path), multipart: nil, bodyFile: file)
        } else if hasFiles || mode == .multipart {
            prepared = try multipartRequest(method: method, url: url)
        } else if mode == .form {
            prepared = PreparedRequest(urlRequest: try formRequest(method: method, url: url, fields: fields), multipart: nil)
        } else {
            prepared = PreparedRequest(urlRequest: try jsonRequest(method: method, url: url, fields: fields), multipart: nil)
        }
        try applyHeaders(to: &prepared.urlRequest)
        return prepared
    }

    // MARK: - URL

    /// The URL with each `name==value` appended to its query in order (repeated names repeat),
    /// before its fragment.
    func urlWithQuery() throws -> URL {
        let pairs = arguments.items.compactMap { item -> String? in
            guard case .query(let name, let value) = item else { return nil }
            return percentEscaped(name) + "=" + percentEscaped(value)
        }
        var text = arguments.url
        if !pairs.isEmpty {
            // Before the fragment (after it they would be part of it, never sent).
            let fragmentStart = text.firstIndex(of: "#") ?? text.endIndex
            let beforeFragment = text[..<fragmentStart]
            let separator = !beforeFragment.contains("?") ? "?" : beforeFragment.hasSuffix("?") || beforeFragment.hasSuffix("&") ? "" : "&"
            text = beforeFragment + separator + pairs.joined(separator: "&") + text[fragmentStart...]
        }
        guard let url = URL(string: text), url.host != nil else {
            throw RequestBuildError(description: "invalid URL: \(arguments.url)")
        }
        // An impossible port (`:99999`, `:0`) is a bad URL like any other, not a failed connection.
        if let port = URLComponents(url: url, resolvingAgainstBaseURL: false)?.port, !(1...65535).contains(port) {
            throw RequestBuildError(description: "invalid URL: \(arguments.url): the port must be 1 to 65535")
        }
        return url
    }

    // MARK: - Bodies

    /// Sets the default headers and credentials; with `fieldsInBody`, fields go in the body for
    /// every method, GET included (HTTPie sends what you type).
    private func configure(_ serializer: HTTPRequestSerializer, accept: String, fieldsInBody: Bool) {
        if fieldsInBody { serializer.httpMethodsEncodingParametersInURI = [] }
        serializer.setValue(accept, forHTTPHeaderField: "Accept")
        if let timeout { serializer.timeoutInterval = timeout }
        if let basicAuth { serializer.setAuthorizationHeader(username: basicAuth.user, password: basicAuth.password) }
    }

    private func jsonRequest(method: String, url: URL, fields: [RequestItem]) throws -> URLRequest {
        let serializer = JSONRequestSerializer()
        configure(
            serializer.base, accept: fields.isEmpty && !jsonExplicit ? "*/*" : Self.jsonAccept,
            fieldsInBody: !fields.isEmpty)
        guard !fields.isEmpty else {
            var request = try serializer.request(method: method, urlString: url.absoluteString, parameters: nil)
            if jsonExplicit { request.setValue("application/json", forHTTPHeaderField: "Content-Type") }
            return request
        }
        // The object is written here, in the order typed (the serializer would sort its keys).
        var members: [OrderedJSONBody.Member] = []
        for field in fields {
            switch field {
            case .dataField(let name, let value): members.append(.init(name: name, json: OrderedJSONBody.quoted(value)))
            case .dataFieldFromFile(let name, let path):
                members.append(.init(name: name, json: OrderedJSONBody.quoted(try Self.text(ofFile: path))))
            case .rawJSONField(let name, let json):
                members.append(.init(name: name, json: try Self.compactRawJSON(json, item: "\(name):=\(json)")))
            case .rawJSONFieldFromFile(let name, let path):
                members.append(.init(name: name, json: try Self.compactRawJSON(try Self.text(ofFile: path), item: "\(name):=@\(path)")))
            default: break
            }
        }
        var request = try serializer.request(method: method, urlString: url.absoluteString, parameters: nil)
        request.httpBody = Data(OrderedJSONBody.encode(members).utf8)
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        return request
    }

    /// A body from stdin or `--raw`, sent as it is: JSON headers (HTTPie's default), or the
    /// form content type with `--form`.
    private func rawBodyRequest(method: String, url: URL, body: Data) throws -> URLRequest {
        let serializer = HTTPRequestSerializer()
        configure(serializer, accept: mode == .form ? "*/*" : Self.jsonAccept, fieldsInBody: false)
        var request = try serializer.request(method: method, urlString: url.absoluteString, parameters: nil)
        request.httpBody = body
        request.setValue(mode == .form ? "application/x-www-form-urlencoded" : "application/json", forHTTPHeaderField: "Content-Type")
        return request
    }

    private func formRequest(method: String, url: URL, fields: [RequestItem]) throws -> URLRequest {
        let pairs = try formPairs(fields)
        let serializer = HTTPRequestSerializer()
        configure(serializer, accept: "*/*", fieldsInBody: !pairs.isEmpty)
        // Ordered pairs, repeated names repeated: HTTPie's form body, not AFN's `a[]` keys.
        let body = pairs.map { percentEscaped($0.name) + "=" + percentEscaped($0.value) }.joined(separator: "&")
        serializer.queryStringSerialization = { _, _ in body }
        let parameters: Parameters? = pairs.isEmpty ? nil : [:]
        return try serializer.request(method: method, urlString: url.absoluteString, parameters: parameters)
    }

    private func multipartRequest(method: String, url: URL) throws -> PreparedRequest {
        let serializer = HTTPRequestSerializer()
        configure(serializer, accept: "*/*", fieldsInBody: true)
        let fields = try formPairs(arguments.items.filter { item in
            if case .fileField = item { return false } else { return item.isData }
        })
        let files = arguments.items.compactMap { item -> (name: String, path: String)? in
            if case .fileField(let name, let path) = item { return (name, path) } else { return nil }
        }
        // Names and file names are written into each part's quoted Content-Disposition: a quote,
        // CR or LF would end it and forge headers or parts.
        for name in fields.map(\.name) + files.flatMap({ [$0.name, URL(fileURLWithPath: $0.path).lastPathComponent] })
        where name.contains("\"") || RequestItem.containsControlCharacter(name) {
            throw RequestBuildError(
                description: "the multipart name '\(name)' can't hold a double quote, CR, LF or other control characters")
        }
        let multipart = try serializer.multipartFormRequest(method: method, urlString: url.absoluteString) { form in
            for field in fields {
                form.appendPart(formData: Data(field.value.utf8), name: field.name)
            }
            for file in files {
                try form.appendPart(fileURL: URL(fileURLWithPath: file.path), name: file.name)
            }
        }
        return PreparedRequest(urlRequest: multipart.urlRequest, multipart: multipart)
    }

    /// The request for an `@file` body; the body itself is streamed from the file when sent.
    private func bodyFileRequest(method: String, url: URL, path: String) throws -> URLRequest {
        let accept = mode == .json && jsonExplicit ? Self.jsonAccept : "*/*"
        let serializer = HTTPRequestSerializer()
        configure(serializer, accept: accept, fieldsInBody: false)
        var request = try serializer.request(method: method, urlString: url.absoluteString, parameters: nil)
        let contentType: String
        switch mode {
        case .form: contentType = "application/x-www-form-urlencoded"
        case .json where jsonExplicit: contentType = "application/json"
        default: contentType = MIMETypes.mimeType(forPathExtension: URL(fileURLWithPath: path).pathExtension)
        }
        request.setValue(contentType, forHTTPHeaderField: "Content-Type")
        return request
    }

    private func formPairs(_ fields: [RequestItem]) throws -> [(name: String, value: String)] {
        try fields.map { field in
            switch field {
            case .dataField(let name, let value): return (name, value)
            case .dataFieldFromFile(let name, let path): return (name, try Self.text(ofFile: path))
            case .rawJSONField(let name, _), .rawJSONFieldFromFile(let name, _):
                throw RequestBuildError(
                    description: "raw JSON field '\(name)' (:=) can't be sent in a form; drop --form/--multipart to send JSON")
            default:
                throw RequestBuildError(description: "unexpected item in a form")
            }
        }
    }

    // MARK: - Headers

    private func applyHeaders(to request: inout URLRequest) throws {
        if let bearerToken, RequestItem.containsControlCharacter(bearerToken) {
            throw RequestBuildError(description: "--bearer: a token can't hold CR, LF or other control characters")
        }
        if let bearerToken { request.setValue("Bearer \(bearerToken)", forHTTPHeaderField: "Authorization") }
        let typed = Set(arguments.items.compactMap { item -> String? in
            switch item {
            case .header(let name, _), .emptyHeader(let name): return name.lowercased()
            default: return nil
            }
        })
        for header in defaultHeaders where !typed.contains(header.name.lowercased()) {
            request.setValue(header.value, forHTTPHeaderField: header.name)
        }
        var seen: Set<String> = []
        for item in arguments.items {
            switch item {
            case .header(let name, let value?):
                if seen.insert(name.lowercased()).inserted {
                    request.setValue(value, forHTTPHeaderField: name)
                } else {
                    request.addValue(value, forHTTPHeaderField: name)
                }
            case .header(let name, nil):
                request.setValue(nil, forHTTPHeaderField: name)
            case .emptyHeader(let name):
                request.setValue("", forHTTPHeaderField: name)
            default: break
            }
        }
    }

    // MARK: - Values

    /// A raw JSON value, validated, without its insignificant whitespace (key order kept).
    static func compactRawJSON(_ text: String, item: String) throws -> String {
        guard let compact = OrderedJSONBody.compactRawJSON(text) else {
            do {
                _ = try JSONValue(parsing: Data(text.utf8))
            } catch {
                throw RequestBuildError(description: "invalid JSON in '\(item)': \(error)")
            }
            throw RequestBuildError(description: "invalid JSON in '\(item)'")
        }
        return compact
    }

    /// A raw JSON value as a parameter value (numbers stay numbers, objects stay objects).
    static func rawJSON(_ text: String, item: String) throws -> ParameterValue {
        do {
            return parameterValue(try JSONValue(parsing: Data(text.utf8)))
        } catch {
            throw RequestBuildError(description: "invalid JSON in '\(item)': \(error)")
        }
    }

    static func parameterValue(_ json: JSONValue) -> ParameterValue {
        switch json {
        case .null: return .null
        case .bool(let value): return .bool(value)
        case .int(let value): return .int(Int(value))
        case .double(let value): return .double(value)
        case .string(let value): return .string(value)
        case .array(let values): return .array(values.map(parameterValue))
        case .object(let object): return .dictionary(object.mapValues(parameterValue))
        }
    }

    static func contents(ofFile path: String) throws -> Data {
        do {
            return try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw RequestBuildError(description: "cannot read the file \(path): no such readable file")
        }
    }

    /// The `@file` body: a readable regular file (not a directory or device; a symbolic link is
    /// followed, as curl does) and its length, checked before anything is sent.
    static func regularFile(_ path: String) throws -> (url: URL, length: Int64) {
        let url = URL(fileURLWithPath: path)
        let length: Int64
        switch FileStatus(path: url.path) {
        case .regular(let size):
            length = size
        case .notRegular:
            throw RequestBuildError(description: "cannot send \(path) as the body: not a regular file")
        case .unavailable:
            throw RequestBuildError(description: "cannot read the file \(path): no such readable file")
        }
        guard FileManager.default.isReadableFile(atPath: url.path) else {
            throw RequestBuildError(description: "cannot read the file \(path): permission denied")
        }
        return (url, length)
    }

    static func text(ofFile path: String) throws -> String {
        guard let text = String(data: try contents(ofFile: path), encoding: .utf8) else {
            throw RequestBuildError(description: "the file \(path) is not UTF-8 text")
        }
        return text
    }
}
