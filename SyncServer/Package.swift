// swift-tools-version: 6.0
// The sync server: LiveObjectsSync's HTTP protocol (docs/SYNC-PROTOCOL.md) on Hummingbird, with
// PostgreSQL for storage. It lives apart from the root package so that the root package keeps
// zero dependencies.
import PackageDescription

let package = Package(
    name: "LiveObjectsSyncServer",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "liveobjects-sync-server", targets: ["liveobjects-sync-server"]),
        .executable(name: "liveobjects-sync-bench", targets: ["liveobjects-sync-bench"]),
    ],
    dependencies: [
        .package(name: "LiveObjects", path: ".."),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        // Hummingbird's own dependency, named for the HTTP parts a connection's guard sees.
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.34.1"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.3"),
    ],
    targets: [
        // The server as a library: storage, access rules, routes. The executable and the tests
        // use it.
        .target(
            name: "LiveObjectsSyncServer",
            dependencies: [
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "LiveObjectsJSON", package: "LiveObjects"),
                .product(name: "LiveObjectsSyncProtocol", package: "LiveObjects"),
            ]
        ),
        .executableTarget(
            name: "liveobjects-sync-server",
            dependencies: ["LiveObjectsSyncServer"]
        ),
        // A device in a process of its own (a realm file, an engine, the HTTP transport), driven
        // by the end-to-end tests through its standard input.
        .executableTarget(
            name: "sync-test-device",
            dependencies: [
                .product(name: "LiveObjects", package: "LiveObjects"),
                .product(name: "LiveObjectsSync", package: "LiveObjects"),
                .product(name: "Persistence", package: "LiveObjects"),
                .product(name: "LiveObjectsSyncTestSupport", package: "LiveObjects"),
            ]
        ),
        // The figure of BENCHMARKS.md's sync section: devices syncing through server processes.
        .executableTarget(
            name: "liveobjects-sync-bench",
            dependencies: [
                "LiveObjectsSyncServer",
                .product(name: "LiveObjects", package: "LiveObjects"),
                .product(name: "LiveObjectsSync", package: "LiveObjects"),
            ]
        ),
        .testTarget(
            name: "LiveObjectsSyncServerTests",
            dependencies: [
                "LiveObjectsSyncServer",
                // Started as child processes by the tests, so built with them.
                "liveobjects-sync-server",
                "sync-test-device",
                .product(name: "LiveObjects", package: "LiveObjects"),
                .product(name: "LiveObjectsSync", package: "LiveObjects"),
                .product(name: "Persistence", package: "LiveObjects"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "LiveObjectsSyncProtocol", package: "LiveObjects"),
                .product(name: "LiveObjectsSyncTestSupport", package: "LiveObjects"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
