// swift-tools-version: 6.0
// The benchmark package: LiveObjects against GRDB (SQLite) and plain Swift collections.
// It lives apart from the root package so that the root package keeps zero dependencies.
import PackageDescription

let package = Package(
    name: "LiveObjectsBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "LiveObjects", path: ".."),
        .package(url: "https://github.com/groue/GRDB.swift", exact: "7.10.0"),
    ],
    targets: [
        .executableTarget(
            name: "liveobjects-bench",
            dependencies: [
                .product(name: "LiveObjects", package: "LiveObjects"),
                .product(name: "Persistence", package: "LiveObjects"),
                .product(name: "GRDB", package: "GRDB.swift"),
            ]
        ),
        .executableTarget(
            name: "liveobjects-querybench",
            dependencies: [.product(name: "LiveObjects", package: "LiveObjects")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
