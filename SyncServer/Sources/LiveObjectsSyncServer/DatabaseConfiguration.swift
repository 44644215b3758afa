import Foundation
import PostgresNIO

/// Where the server's PostgreSQL database is, from the environment.
///
/// `LIVEOBJECTS_SYNC_DATABASE_URL` (`postgres://USER:PASSWORD@HOST:PORT/DATABASE`) wins; without
/// it, libpq's variables are read: `PGHOST` (a host name, or a directory holding the server's
/// unix socket), `PGPORT` (5432), `PGUSER` (`postgres`), `PGPASSWORD`, `PGDATABASE` (the user's
/// name).
public struct DatabaseConfiguration: Sendable, CustomStringConvertible {
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

    /// Creates a configuration.
    public init(host: String, port: Int = 5432, user: String, password: String? = nil, database: String) {
        self.host = host
        self.port = port
        self.user = user
        self.password = password
        self.database = database
    }

    /// The configuration the environment gives.
    ///
    /// - Throws: ``SyncServerError`` when no database is named, or the URL is malformed.
    public static func fromEnvironment(_ environment: [String: String] = ProcessInfo.processInfo.environment)
        throws(SyncServerError) -> DatabaseConfiguration
    {
        if let text = environment["LIVEOBJECTS_SYNC_DATABASE_URL"], !text.isEmpty {
            guard let url = URLComponents(string: text), url.scheme == "postgres" || url.scheme == "postgresql",
                let host = url.host, !host.isEmpty
            else {
                throw SyncServerError(
                    .internal, "LIVEOBJECTS_SYNC_DATABASE_URL is not postgres://USER:PASSWORD@HOST:PORT/DATABASE")
            }
            let user = url.user ?? "postgres"
            let database = String(url.path.drop(while: { $0 == "/" }))
            return DatabaseConfiguration(
                host: host, port: url.port ?? 5432, user: user, password: url.password,
                database: database.isEmpty ? user : database)
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
            password: environment["PGPASSWORD"], database: environment["PGDATABASE"] ?? user)
    }

    /// The client's configuration.
    public var clientConfiguration: PostgresClient.Configuration {
        if host.hasPrefix("/") {
            return .init(
                unixSocketPath: "\(host)/.s.PGSQL.\(port)", username: user, password: password, database: database)
        }
        return .init(host: host, port: port, username: user, password: password, database: database, tls: .disable)
    }

    /// The configuration of a single connection (the one that listens for notifications).
    public var connectionConfiguration: PostgresConnection.Configuration {
        if host.hasPrefix("/") {
            return .init(
                unixSocketPath: "\(host)/.s.PGSQL.\(port)", username: user, password: password, database: database)
        }
        return .init(host: host, port: port, username: user, password: password, database: database, tls: .disable)
    }

    public var description: String { "postgres://\(user)@\(host):\(port)/\(database)" }
}
