import Foundation
import PostgresNIO

/// Where the server's PostgreSQL database is, from the environment.
///
/// `LIVEOBJECTS_SYNC_DATABASE_URL` (`postgres://USER:PASSWORD@HOST:PORT/DATABASE`, with
/// `?sslmode=MODE&sslrootcert=FILE` if needed) wins; without it, libpq's variables are read:
/// `PGHOST` (a host name, or a directory holding the server's unix socket), `PGPORT` (5432),
/// `PGUSER` (`postgres`), `PGPASSWORD`, `PGDATABASE` (the user's name), `PGSSLMODE`,
/// `PGSSLROOTCERT`. The URL's `sslmode` wins over `PGSSLMODE`.
public struct DatabaseConfiguration: Sendable, CustomStringConvertible {
    /// How the connections to PostgreSQL use TLS: libpq's `sslmode`, without `allow`.
    public enum TLSMode: String, Sendable, CaseIterable {
        /// Plain TCP.
        case disable
        /// TLS when the server offers it, plain TCP otherwise; the certificate is not checked. The
        /// default, as libpq's.
        case prefer
        /// TLS or no connection; the certificate is not checked (the traffic is encrypted, the
        /// server is not authenticated).
        case require
        /// TLS, with a certificate signed by a trusted authority (``DatabaseConfiguration/rootCertificates``,
        /// or the system's), whatever host it names.
        case verifyCA = "verify-ca"
        /// TLS, with a certificate signed by a trusted authority and naming the host.
        case verifyFull = "verify-full"
    }

    /// The host name, or the directory of the unix socket when it starts with `/`.
    public var host: String
    /// The TCP port (also names the unix socket, `.s.PGSQL.PORT`).
    public var port: Int
    /// The user.
    public var user: String
    /// The password, if the server asks for one.
    public var password: String?
    /// The database.
    public var database: String
    /// TLS to the database, over TCP (a unix socket never uses it). Default: `prefer`.
    public var tlsMode: TLSMode
    /// A PEM file of the authorities that sign the database's certificate (libpq's
    /// `sslrootcert`); nil, the system's. Read by `verify-ca` and `verify-full`.
    public var rootCertificates: String?

    /// Creates a configuration.
    public init(
        host: String, port: Int = 5432, user: String, password: String? = nil, database: String,
        tlsMode: TLSMode = .prefer, rootCertificates: String? = nil
    ) {
        self.host = host
        self.port = port
        self.user = user
        self.password = password
        self.database = database
        self.tlsMode = tlsMode
        self.rootCertificates = rootCertificates
    }

    /// The configuration the environment gives.
    ///
    /// - Throws: ``SyncServerError`` when no database is named, or the URL is malformed.
    public static func fromEnvironment(_ environment: [String: String] = ProcessInfo.processInfo.environment)
        throws(SyncServerError) -> DatabaseConfiguration
    {
        var tlsMode = try Self.tlsMode(environment["PGSSLMODE"], from: "PGSSLMODE")
        var rootCertificates = environment["PGSSLROOTCERT"].flatMap { $0.isEmpty ? nil : $0 }
        if let text = environment["LIVEOBJECTS_SYNC_DATABASE_URL"], !text.isEmpty {
            guard let url = URLComponents(string: text), url.scheme == "postgres" || url.scheme == "postgresql",
                let host = url.host, !host.isEmpty
            else {
                throw SyncServerError(
                    .internal,
                    "LIVEOBJECTS_SYNC_DATABASE_URL is not postgres://USER:PASSWORD@HOST:PORT/DATABASE[?sslmode=MODE]")
            }
            for item in url.queryItems ?? [] {
                switch item.name {
                case "sslmode": tlsMode = try Self.tlsMode(item.value, from: "the URL's sslmode")
                case "sslrootcert": rootCertificates = item.value
                default:
                    throw SyncServerError(
                        .internal,
                        "LIVEOBJECTS_SYNC_DATABASE_URL has the parameter \(item.name): only sslmode and sslrootcert are read"
                    )
                }
            }
            let user = url.user ?? "postgres"
            let database = String(url.path.drop(while: { $0 == "/" }))
            return DatabaseConfiguration(
                host: host, port: url.port ?? 5432, user: user, password: url.password,
                database: database.isEmpty ? user : database, tlsMode: tlsMode, rootCertificates: rootCertificates)
        }
        guard let host = environment["PGHOST"], !host.isEmpty else {
            throw SyncServerError(
                .internal,
                "no database: set LIVEOBJECTS_SYNC_DATABASE_URL, or PGHOST (and PGPORT, PGUSER, PGDATABASE); "
                    + "SyncServer/scripts/with-postgres.sh starts a throwaway one")
        }
        let user = environment["PGUSER"] ?? "postgres"
        return DatabaseConfiguration(
            host: host, port: environment["PGPORT"].flatMap { Int($0) } ?? 5432, user: user,
            password: environment["PGPASSWORD"], database: environment["PGDATABASE"] ?? user, tlsMode: tlsMode,
            rootCertificates: rootCertificates)
    }

    /// The mode a setting names; `prefer` when it is absent or empty.
    private static func tlsMode(_ text: String?, from source: String) throws(SyncServerError) -> TLSMode {
        guard let text, !text.isEmpty else { return .prefer }
        guard let mode = TLSMode(rawValue: text) else {
            throw SyncServerError(
                .internal,
                "\(source) is \"\(text)\", not one of " + TLSMode.allCases.map(\.rawValue).joined(separator: ", "))
        }
        return mode
    }

    /// NIOSSL's client configuration for the mode; nil for `disable`.
    var tlsConfiguration: TLSConfiguration? {
        var configuration = TLSConfiguration.makeClientConfiguration()
        switch tlsMode {
        case .disable: return nil
        case .prefer, .require: configuration.certificateVerification = .none
        case .verifyCA: configuration.certificateVerification = .noHostnameVerification
        case .verifyFull: configuration.certificateVerification = .fullVerification
        }
        if let rootCertificates { configuration.trustRoots = .file(rootCertificates) }
        return configuration
    }

    /// The client's configuration.
    public var clientConfiguration: PostgresClient.Configuration {
        if host.hasPrefix("/") {
            return .init(
                unixSocketPath: "\(host)/.s.PGSQL.\(port)", username: user, password: password, database: database)
        }
        let tls: PostgresClient.Configuration.TLS =
            switch (tlsMode, tlsConfiguration) {
            case (.disable, _), (_, nil): .disable
            case (.prefer, let configuration?): .prefer(configuration)
            case (_, let configuration?): .require(configuration)
            }
        return .init(host: host, port: port, username: user, password: password, database: database, tls: tls)
    }

    /// The configuration of a single connection (the one that listens for notifications).
    ///
    /// - Throws: NIOSSL's error when the TLS context cannot be made (a root certificate file
    ///   that cannot be read).
    public var connectionConfiguration: PostgresConnection.Configuration {
        get throws {
            if host.hasPrefix("/") {
                return .init(
                    unixSocketPath: "\(host)/.s.PGSQL.\(port)", username: user, password: password,
                    database: database)
            }
            var tls = PostgresConnection.Configuration.TLS.disable
            if let configuration = tlsConfiguration {
                let context = try NIOSSLContext(configuration: configuration)
                tls = tlsMode == .prefer ? .prefer(context) : .require(context)
            }
            return .init(host: host, port: port, username: user, password: password, database: database, tls: tls)
        }
    }

    public var description: String {
        "postgres://\(user)@\(host):\(port)/\(database)" + (host.hasPrefix("/") ? "" : "?sslmode=\(tlsMode.rawValue)")
    }
}
