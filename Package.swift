// swift-tools-version: 6.0
import PackageDescription

let package = Package(
    name: "LiveObjects",
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    products: [
        .library(name: "LiveObjects", targets: ["LiveObjects"]),
        .library(name: "Persistence", targets: ["Persistence"]),
        .library(name: "LiveObjectsSync", targets: ["LiveObjectsSync"]),
        // The sync protocol's shared types, for the sync server (SyncServer/); apps get them
        // through LiveObjectsSync.
        .library(name: "LiveObjectsSyncProtocol", targets: ["LiveObjectsSyncProtocol"]),
        // The JSON value tree, reader and writer, for the sync server (SyncServer/), not for apps.
        .library(name: "LiveObjectsJSON", targets: ["LiveObjectsJSON"]),
        // For tests only: the sync tests' models and seeded generator, shared with SyncServer/.
        .library(name: "LiveObjectsSyncTestSupport", targets: ["LiveObjectsSyncTestSupport"]),
        .executable(name: "liveobj", targets: ["liveobj"]),
        .executable(name: "Playground", targets: ["Playground"]),
    ],
    targets: [
        .target(name: "LiveObjects", dependencies: ["LiveObjectsStore"]),
        // The bottom layers of LiveObjects (values, errors, schema, store): they cannot see the layers above.
        .target(name: "LiveObjectsStore", dependencies: ["CPrefetch"]),
        // One inline function for the processor's prefetch hint, which Swift does not expose.
        .target(name: "CPrefetch"),
        // The one JSON of the project (Persistence, the shell, the sync protocol, the sync state
        // log and the server): a support library at the bottom (no dependency, its own JSONError).
        .target(name: "LiveObjectsJSON"),
        .target(name: "Persistence", dependencies: ["LiveObjects", "LiveObjectsJSON", "CCRC32C"]),
        // CRC-32C with the processor's CRC instructions, for the snapshot and journal checksums.
        .target(name: "CCRC32C"),
        // The sync protocol's one definition (codes, kinds, wire messages, limits, the list
        // merge) over Foundation and LiveObjectsJSON: the device's engine and the server both use it.
        .target(name: "LiveObjectsSyncProtocol", dependencies: ["LiveObjectsJSON"]),
        .target(
            name: "LiveObjectsSync",
            dependencies: ["LiveObjects", "Persistence", "LiveObjectsJSON", "LiveObjectsSyncProtocol"]
        ),
        .target(name: "LiveObjectsShell", dependencies: ["LiveObjects", "LiveObjectsJSON", "Persistence"]),
        .executableTarget(name: "liveobj", dependencies: ["LiveObjectsShell"]),
        // The walkthroughs: `swift run Playground` lists them, `swift run Playground NAME` runs one.
        .executableTarget(
            name: "Playground", dependencies: ["LiveObjects", "Persistence", "LiveObjectsSync"], path: "Playground"),
        // Started (and killed) by the crash test of the PersistenceTests.
        .executableTarget(
            name: "persistence-crash-child", dependencies: ["LiveObjects", "Persistence", "LiveObjectsTestSupport"]),
        .target(name: "LiveObjectsTestSupport", dependencies: ["LiveObjects"]),
        .target(name: "LiveObjectsSyncTestSupport", dependencies: ["LiveObjects", "LiveObjectsSync"]),
        // What the sync transport costs while it waits for a long poll (BENCHMARKS.md): `swift run sync-wait-bench`.
        .executableTarget(name: "sync-wait-bench", dependencies: ["LiveObjectsSync", "LiveObjectsTestSupport"]),
        .testTarget(
            name: "LiveObjectsTests",
            dependencies: ["LiveObjects", "LiveObjectsTestSupport"]
        ),
        .testTarget(
            name: "LiveObjectsShellTests", dependencies: ["LiveObjectsShell", "LiveObjects", "Persistence", "liveobj"]
        ),
        .testTarget(
            name: "PersistenceTests",
            dependencies: [
                "Persistence", "LiveObjectsJSON", "LiveObjects", "LiveObjectsTestSupport", "persistence-crash-child",
            ]
        ),
        .testTarget(
            name: "LiveObjectsSyncTests",
            dependencies: [
                "LiveObjectsSync", "LiveObjectsSyncProtocol", "LiveObjects", "Persistence", "LiveObjectsTestSupport",
                "LiveObjectsSyncTestSupport",
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
