import ArgumentParser

/// HTTPie's "SSL" options, with Courier's pinning beside them.
struct SSLOptions: ParsableArguments {
    @Option(help: ArgumentHelp("'no' to accept any certificate, or a CA file (PEM or DER) to trust.", valueName: "no|path"))
    var verify: String?

    @Option(name: .customLong("pin-cert"), help: ArgumentHelp("Accept only servers whose chain holds this certificate (PEM or DER).", valueName: "path"))
    var pinCert: String?

    @Option(name: .customLong("pin-mode"), help: "What --pin-cert pins: certificate or public-key.")
    var pinMode: String = "certificate"

    @Option(help: ArgumentHelp("A client certificate for mutual TLS (PEM or DER; may also hold the key).", valueName: "file"))
    var cert: String?

    @Option(name: .customLong("cert-key"), help: ArgumentHelp("The private key of --cert (PEM or DER, unencrypted).", valueName: "file"))
    var certKey: String?

    @Option(help: ArgumentHelp(
        "Keep HTTP Strict Transport Security in this file (curl's format; made if missing): read first, written back after the exchange. An http:// URL to a host it knows is sent over https (an explicit port is kept, as curl does).",
        valueName: "file"))
    var hsts: String?
}
