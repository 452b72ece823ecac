public import Foundation

extension Certificate {
    /// The file name extensions ``certificates(inDirectory:)`` picks up (compared case-insensitively).
    public static let certificateFileExtensions: Set<String> = ["cer", "crt", "pem", "der"]

    /// Loads every certificate file of a folder: AFN's `+certificatesInBundle:`.
    ///
    /// AFN pins every `*.cer` (DER) file of a bundle; Courier reads `*.cer`, `*.crt`, `*.pem` and
    /// `*.der` files of one folder (not its subfolders), and tells PEM from DER by content, so a
    /// PEM file named `.cer` works too. A PEM file may hold several certificates; all are loaded.
    /// Hidden files and other extensions are skipped.
    ///
    /// - Parameter directory: A `file:` URL of a folder.
    /// - Returns: The certificates found (empty when the folder holds no certificate file).
    /// - Throws: ``CourierError/certificateFileUnreadable(path:reason:)`` when the folder or a file
    ///   can't be read; ``CourierError/invalidCertificateFile(path:reason:)`` when a file with a
    ///   certificate extension does not hold a certificate.
    public static func certificates(inDirectory directory: URL) throws -> Set<Certificate> {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        } catch {
            throw CourierError.certificateFileUnreadable(path: directory.path, reason: describe(error, path: directory.path))
        }
        var result = Set<Certificate>()
        for name in names.sorted() where !name.hasPrefix(".") {
            let file = directory.appendingPathComponent(name)
            guard certificateFileExtensions.contains(file.pathExtension.lowercased()) else { continue }
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: file.path, isDirectory: &isDirectory), !isDirectory.boolValue
            else { continue }
            result.formUnion(try certificates(contentsOf: file))
        }
        return result
    }

    /// Loads the certificates of one file, PEM (every `CERTIFICATE` block) or DER (one certificate).
    ///
    /// - Parameter file: A `file:` URL.
    /// - Returns: The certificates in file order; never empty.
    /// - Throws: ``CourierError/certificateFileUnreadable(path:reason:)`` when the file can't be
    ///   read; ``CourierError/invalidCertificateFile(path:reason:)`` when it holds no certificate.
    public static func certificates(contentsOf file: URL) throws -> [Certificate] {
        let data: Data
        do {
            data = try Data(contentsOf: file)
        } catch {
            throw CourierError.certificateFileUnreadable(path: file.path, reason: describe(error, path: file.path))
        }
        do {
            return try certificates(fromFileContents: data)
        } catch CourierError.invalidCertificate(let reason) {
            throw CourierError.invalidCertificateFile(path: file.path, reason: reason)
        }
    }

    /// PEM when the bytes hold a PEM certificate marker, DER otherwise.
    static func certificates(fromFileContents data: Data) throws -> [Certificate] {
        let marker = Array("-----BEGIN CERTIFICATE-----".utf8)
        if data.firstRange(of: marker) != nil {
            return try certificates(pemEncoded: String(decoding: data, as: UTF8.self))
        }
        if data.firstRange(of: Array("-----BEGIN ".utf8)) != nil {
            throw CourierError.invalidCertificate(reason: "a PEM file without a CERTIFICATE block")
        }
        return [try Certificate(derEncoded: data)]
    }

    /// Why `path` could not be read, in words.
    private static func describe(_ error: any Error, path: String) -> String {
        let files = FileManager.default
        if !files.fileExists(atPath: path) { return "no such file or directory" }
        if !files.isReadableFile(atPath: path) { return "permission denied" }
        return error.localizedDescription
    }
}
