/// MIME types by file extension, built in because Linux's MIME database (`/etc/mime.types`,
/// shared-mime-info) may be missing from a container: the table AFNetworking gets from UTIs.
public enum MIMETypes {
    /// The MIME type for a file extension (case-insensitive, without the dot), or
    /// `application/octet-stream` when unknown (AFN's fallback).
    public static func mimeType(forPathExtension pathExtension: String) -> String {
        table[pathExtension.lowercased()] ?? "application/octet-stream"
    }

    static let table: [String: String] = [
        // text
        "txt": "text/plain", "text": "text/plain", "log": "text/plain", "conf": "text/plain",
        "html": "text/html", "htm": "text/html", "css": "text/css", "csv": "text/csv",
        "tsv": "text/tab-separated-values", "md": "text/markdown", "markdown": "text/markdown",
        "xml": "application/xml", "js": "text/javascript", "mjs": "text/javascript", "ics": "text/calendar",
        "vcf": "text/vcard", "rtf": "application/rtf", "yaml": "application/yaml", "yml": "application/yaml",
        // data
        "json": "application/json", "geojson": "application/geo+json", "plist": "application/x-plist",
        "pdf": "application/pdf", "zip": "application/zip", "gz": "application/gzip", "tgz": "application/gzip",
        "tar": "application/x-tar", "bz2": "application/x-bzip2", "xz": "application/x-xz", "7z": "application/x-7z-compressed",
        "rar": "application/vnd.rar", "jar": "application/java-archive", "wasm": "application/wasm",
        "bin": "application/octet-stream", "exe": "application/octet-stream", "dmg": "application/x-apple-diskimage",
        "doc": "application/msword",
        "docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        "xls": "application/vnd.ms-excel",
        "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        "ppt": "application/vnd.ms-powerpoint",
        "pptx": "application/vnd.openxmlformats-officedocument.presentationml.presentation",
        "odt": "application/vnd.oasis.opendocument.text", "epub": "application/epub+zip",
        "sqlite": "application/vnd.sqlite3", "der": "application/x-x509-ca-cert", "cer": "application/pkix-cert",
        "crt": "application/x-x509-ca-cert", "pem": "application/x-pem-file", "p12": "application/x-pkcs12",
        // images
        "png": "image/png", "jpg": "image/jpeg", "jpeg": "image/jpeg", "jpe": "image/jpeg", "gif": "image/gif",
        "webp": "image/webp", "bmp": "image/bmp", "ico": "image/x-icon", "tif": "image/tiff", "tiff": "image/tiff",
        "svg": "image/svg+xml", "heic": "image/heic", "heif": "image/heif", "avif": "image/avif",
        // audio
        "mp3": "audio/mpeg", "m4a": "audio/mp4", "aac": "audio/aac", "wav": "audio/wav", "ogg": "audio/ogg",
        "oga": "audio/ogg", "opus": "audio/opus", "flac": "audio/flac", "mid": "audio/midi", "midi": "audio/midi",
        "aif": "audio/aiff", "aiff": "audio/aiff", "caf": "audio/x-caf",
        // video
        "mp4": "video/mp4", "m4v": "video/x-m4v", "mov": "video/quicktime", "webm": "video/webm",
        "mkv": "video/x-matroska", "avi": "video/x-msvideo", "mpeg": "video/mpeg", "mpg": "video/mpeg",
        "ogv": "video/ogg", "3gp": "video/3gpp", "ts": "video/mp2t", "m3u8": "application/vnd.apple.mpegurl",
        // fonts
        "ttf": "font/ttf", "otf": "font/otf", "woff": "font/woff", "woff2": "font/woff2",
    ]
}
