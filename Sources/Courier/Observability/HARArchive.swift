import Foundation

/// An HTTP Archive (HAR 1.2, the format browsers' developer tools export): the `log` of
/// exchanges, each an ``Entry`` with its request, response and timings. ``HARRecorder`` builds
/// one from a session's exchanges; `Codable`, so it reads back what it wrote. Field names are
/// the specification's.
public struct HARArchive: Codable, Sendable {
    /// The archive's one log.
    public var log: Log

    /// Creates an archive of `entries`, made by `creator`.
    public init(entries: [Entry], creator: Creator = .courier) {
        self.log = Log(version: "1.2", creator: creator, entries: entries)
    }

    /// The log: its format version, what made it, and the entries in the order they started.
    public struct Log: Codable, Sendable {
        /// `1.2`.
        public var version: String
        /// What made the archive.
        public var creator: Creator
        /// The exchanges, in the order they started.
        public var entries: [Entry]
    }

    /// The application that made the archive.
    public struct Creator: Codable, Sendable {
        /// Its name.
        public var name: String
        /// Its version.
        public var version: String

        /// Creates a creator.
        public init(name: String, version: String) {
            self.name = name
            self.version = version
        }

        /// Courier, with the HAR format version it writes as its version (the package has no
        /// version number of its own at run time).
        public static let courier = Creator(name: "Courier", version: "1.2")
    }

    /// A header field, query parameter or cookie.
    public struct NameValue: Codable, Sendable, Equatable {
        /// The name.
        public var name: String
        /// The value.
        public var value: String

        /// Creates a pair.
        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    /// One exchange.
    public struct Entry: Codable, Sendable {
        /// When the request started (ISO 8601 with milliseconds).
        public var startedDateTime: String
        /// Milliseconds from start to end: the sum of the timings (but `ssl`, inside `connect`).
        public var time: Double
        /// The request.
        public var request: Request
        /// The response (status 0 when none arrived).
        public var response: Response
        /// Not used by Courier: always empty.
        public var cache: Cache
        /// The phases, in milliseconds.
        public var timings: Timings
        /// The server's IP address (or a Unix socket's path), when known.
        public var serverIPAddress: String?
        /// The local port of the connection, as a string, when known.
        public var connection: String?
        /// Why the exchange failed, when it did (HAR's custom-field convention: a leading `_`).
        public var _error: String?
    }

    /// A request as sent.
    public struct Request: Codable, Sendable {
        /// The method.
        public var method: String
        /// The absolute URL.
        public var url: String
        /// `HTTP/1.1` or `HTTP/2`.
        public var httpVersion: String
        /// Cookies sent (from the `Cookie` field).
        public var cookies: [NameValue]
        /// Header fields sent.
        public var headers: [NameValue]
        /// The URL's query parameters.
        public var queryString: [NameValue]
        /// The body's type and size, when there was one.
        public var postData: PostData?
        /// Bytes of the request head (approximate), or -1.
        public var headersSize: Int
        /// Bytes of the request body.
        public var bodySize: Int
    }

    /// A request body, described (its bytes are not kept).
    public struct PostData: Codable, Sendable {
        /// Its `Content-Type`.
        public var mimeType: String
        /// Empty: the body's bytes are not recorded.
        public var text: String
    }

    /// A response as received.
    public struct Response: Codable, Sendable {
        /// The status code, 0 when no response arrived.
        public var status: Int
        /// The reason phrase.
        public var statusText: String
        /// `HTTP/1.1` or `HTTP/2`.
        public var httpVersion: String
        /// Cookies set (from `Set-Cookie` fields).
        public var cookies: [NameValue]
        /// Header fields received.
        public var headers: [NameValue]
        /// The body's size and type.
        public var content: Content
        /// The `Location` field, or empty.
        public var redirectURL: String
        /// Bytes of the response head (approximate), or -1.
        public var headersSize: Int
        /// Bytes of the response body received.
        public var bodySize: Int
    }

    /// A response body, described.
    public struct Content: Codable, Sendable {
        /// Bytes of the body (decoded).
        public var size: Int
        /// Its `Content-Type`, or empty.
        public var mimeType: String
    }

    /// HAR's cache field (left empty).
    public struct Cache: Codable, Sendable {
        /// Creates an empty cache field.
        public init() {}
    }

    /// The exchange's phases in milliseconds; -1 where a phase did not happen.
    public struct Timings: Codable, Sendable, Equatable {
        /// Waiting for a connection (time not spent on the new connection's own setup).
        public var blocked: Double
        /// Name lookup.
        public var dns: Double
        /// TCP connect, proxy handshake and TLS.
        public var connect: Double
        /// Writing the request.
        public var send: Double
        /// From the request's last byte to the response's first.
        public var wait: Double
        /// Reading the response.
        public var receive: Double
        /// The TLS handshake (also counted in `connect`).
        public var ssl: Double
    }
}
