import Foundation

/// Small, valid images for `/image/...`: a 16×12 picture (a gradient in the raster formats,
/// four colour quadrants in GIF, a circle in SVG), so that image decoders and size sniffers
/// have something real to read. Generated once with zlib, libjpeg, cwebp and a GIF writer,
/// embedded here as base64.
enum SampleImages {
    /// The formats `/image/{format}` serves.
    enum Format: String, CaseIterable {
        case png, jpeg, gif, webp, svg

        /// The `Content-Type` of the format.
        var contentType: String {
            switch self {
            case .png: "image/png"
            case .jpeg: "image/jpeg"
            case .gif: "image/gif"
            case .webp: "image/webp"
            case .svg: "image/svg+xml"
            }
        }

        /// The image's bytes.
        var bytes: [UInt8] {
            switch self {
            case .png: SampleImages.png
            case .jpeg: SampleImages.jpeg
            case .gif: SampleImages.gif
            case .webp: SampleImages.webp
            case .svg: SampleImages.svg
            }
        }
    }

    /// Pixel size of every sample image.
    static let width = 16
    static let height = 12

    static let png = decode(
        "iVBORw0KGgoAAAANSUhEUgAAABAAAAAMCAIAAADkharWAAABYElEQVR42g3LIRXFIBiAUSqg8ATAUAEizKFXADH7yZ1DAixy" +
        "DThUmKAAGrcK/3vXX6UUWmEVXhEUh+JUXIpbURWPYihexVJ8ClEoZdAGa/CGYDgMp+Ey3IZqeAzD8BqW4TOI+QeHdliHdwTH" +
        "4Tgdl+N2VMfjGI7XsRyfQ9w/RHTERnwkRI7IGbkid6RGnsiIvJEV+SIS/yGhEzbhEyFxJM7ElbgTNfEkRuJNrMSXkPQPGZ2x" +
        "GZ8JmSNzZq7MnamZJzMyb2Zlvozkfyjogi34QigchbNwFe5CLTyFUXgLq/AVpPxDQzdswzdC42icjatxN2rjaYzG21iNryHt" +
        "Hzq6Yzu+EzpH5+xcnbtTO09ndN7O6nwd6f8w0RM78ZMwOSbn5Jrckzp5JmPyTtbkm8j8h43e2I3fhM2xOTfX5t7UzbMZm3ez" +
        "Nt9G9j8IWrCCF4JwCKdwCbdQhUcYwiss4RNE+AHM9h8AuWiFpAAAAABJRU5ErkJggg=="
    )

    static let jpeg = decode(
        "/9j/4AAQSkZJRgABAQAAAQABAAD/2wBDAAUDBAQEAwUEBAQFBQUGBwwIBwcHBw8LCwkMEQ8SEhEPERETFhwXExQaFRERGCEY" +
        "Gh0dHx8fExciJCIeJBweHx7/2wBDAQUFBQcGBw4ICA4eFBEUHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4e" +
        "Hh4eHh4eHh4eHh4eHh7/wAARCAAMABADASIAAhEBAxEB/8QAHwAAAQUBAQEBAQEAAAAAAAAAAAECAwQFBgcICQoL/8QAtRAA" +
        "AgEDAwIEAwUFBAQAAAF9AQIDAAQRBRIhMUEGE1FhByJxFDKBkaEII0KxwRVS0fAkM2JyggkKFhcYGRolJicoKSo0NTY3ODk6" +
        "Q0RFRkdISUpTVFVWV1hZWmNkZWZnaGlqc3R1dnd4eXqDhIWGh4iJipKTlJWWl5iZmqKjpKWmp6ipqrKztLW2t7i5usLDxMXG" +
        "x8jJytLT1NXW19jZ2uHi4+Tl5ufo6erx8vP09fb3+Pn6/8QAHwEAAwEBAQEBAQEBAQAAAAAAAAECAwQFBgcICQoL/8QAtREA" +
        "AgECBAQDBAcFBAQAAQJ3AAECAxEEBSExBhJBUQdhcRMiMoEIFEKRobHBCSMzUvAVYnLRChYkNOEl8RcYGRomJygpKjU2Nzg5" +
        "OkNERUZHSElKU1RVVldYWVpjZGVmZ2hpanN0dXZ3eHl6goOEhYaHiImKkpOUlZaXmJmaoqOkpaanqKmqsrO0tba3uLm6wsPE" +
        "xcbHyMnK0tPU1dbX2Nna4uPk5ebn6Onq8vP09fb3+Pn6/9oADAMBAAIRAxEAPwDzLQPAP3f3H6V6DoHgH7v7j9K9S0DRrD5f" +
        "3Veg6Bo1h8v7quDNeLK+u55nAPHGJ93c/9k="
    )

    static let gif = decode(
        "R0lGODlhEAAMAPEAAP8AAACgAAAA////ACwAAAAAEAAMAAACbQQIECDAhAkTJgQIECDAhAkTJgQIECDAhAkTJgQIECDAhAkT" +
        "JgQIECDAhAkTJgQIECDAhAkTJpQoUaLEjRs3bpQoUaLEjRs3bpQoUaLEjRs3bpQoUaLEjRs3bpQoUaLEjRs3bpQoUaLEjRs3" +
        "bgUAOw=="
    )

    static let webp = decode(
        "UklGRjQAAABXRUJQVlA4TCgAAAAvD8ACAJmM6H9sIqL/AQUBC0FrQf+y3BNgIgYwhAQJVpcgpcQ75vtC"
    )

    static let svg = decode(
        "PD94bWwgdmVyc2lvbj0iMS4wIiBlbmNvZGluZz0iVVRGLTgiPz4KPHN2ZyB4bWxucz0iaHR0cDovL3d3dy53My5vcmcvMjAw" +
        "MC9zdmciIHdpZHRoPSIxNiIgaGVpZ2h0PSIxMiIgdmlld0JveD0iMCAwIDE2IDEyIj4KICA8cmVjdCB3aWR0aD0iMTYiIGhl" +
        "aWdodD0iMTIiIGZpbGw9IiMzYjgyZjYiLz4KICA8Y2lyY2xlIGN4PSI4IiBjeT0iNiIgcj0iNCIgZmlsbD0iI2Y1OWUwYiIv" +
        "Pgo8L3N2Zz4K"
    )

    private static func decode(_ base64: String) -> [UInt8] {
        // The literals above are valid base64; an empty image would fail the tests loudly.
        Data(base64Encoded: base64).map { Array($0) } ?? []
    }
}
