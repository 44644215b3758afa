import Foundation
import LiveObjectsSyncServer
import Logging
import PostgresNIO
import Testing

/// Where the database is, and how its connections use TLS.
@Suite struct DatabaseConfigurationTests {
    @Test func theTLSModeComesFromTheURLOrPGSSLMODE() throws {
        let url = "postgres://ann:secret@db.example:5433/sync"
        let plain = try DatabaseConfiguration.fromEnvironment(["LIVEOBJECTS_SYNC_DATABASE_URL": url])
        #expect(plain.tlsMode == .prefer && plain.rootCertificates == nil, "libpq's default")
        #expect(plain.description == "postgres://ann@db.example:5433/sync?sslmode=prefer", "no password")

        let full = try DatabaseConfiguration.fromEnvironment([
            "LIVEOBJECTS_SYNC_DATABASE_URL": url + "?sslmode=verify-full&sslrootcert=/etc/ca.pem",
            "PGSSLMODE": "disable",
        ])
        #expect(full.tlsMode == .verifyFull && full.rootCertificates == "/etc/ca.pem", "the URL wins")
        let fromVariables = try DatabaseConfiguration.fromEnvironment([
            "PGHOST": "db.example", "PGSSLMODE": "require", "PGSSLROOTCERT": "/etc/ca.pem",
        ])
        #expect(fromVariables.tlsMode == .require && fromVariables.rootCertificates == "/etc/ca.pem")
        let socket = try DatabaseConfiguration.fromEnvironment(["PGHOST": "/run/postgresql", "PGSSLMODE": "require"])
        #expect(socket.description == "postgres://postgres@/run/postgresql:5432/postgres", "no TLS on a socket")

        for (environment, named) in [
            (["LIVEOBJECTS_SYNC_DATABASE_URL": url + "?sslmode=yes"], "the URL's sslmode is \"yes\""),
            (["PGHOST": "db.example", "PGSSLMODE": "allow"], "PGSSLMODE is \"allow\""),
            (["LIVEOBJECTS_SYNC_DATABASE_URL": url + "?application_name=x"], "the parameter application_name"),
        ] {
            #expect {
                try DatabaseConfiguration.fromEnvironment(environment)
            } throws: { error in
                "\(error)".contains(named)
                    && "\(error)".contains(named.hasPrefix("the parameter") ? "sslmode" : "verify-full")
            }
        }
    }

    /// Against the test database, which has no TLS: `disable` and `prefer` connect, `require`
    /// does not, with an error that says so.
    @Test func requireFailsAgainstADatabaseWithoutTLS() async throws {
        var database = try DatabaseConfiguration.fromEnvironment()
        try #require(!database.host.hasPrefix("/"), "the test database is reached over TCP")
        var logger = Logger(label: "tls-test")
        logger.logLevel = .critical
        for mode in [DatabaseConfiguration.TLSMode.disable, .prefer] {
            database.tlsMode = mode
            let connection = try await PostgresConnection.connect(
                configuration: try database.connectionConfiguration, id: 1, logger: logger)
            try await connection.close()
        }
        database.tlsMode = .require
        await #expect {
            let connection = try await PostgresConnection.connect(
                configuration: try database.connectionConfiguration, id: 1, logger: logger)
            try await connection.close()
        } throws: { error in
            String(reflecting: error).contains("sslUnsupported")
        }
    }
}
