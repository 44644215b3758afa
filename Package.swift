// swift-tools-version: 6.0
import PackageDescription

let package = Package(
    name: "LiveObjects",
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    products: [
        .library(name: "LiveObjects", targets: ["LiveObjects"]),
        .library(name: "Persistence", targets: ["Persistence"]),
        .executable(name: "liveobj", targets: ["liveobj"]),
    ],
    targets: [
        .target(name: "LiveObjects"),
        .target(name: "Persistence", dependencies: ["LiveObjects"]),
        .target(name: "LiveObjectsShell", dependencies: ["LiveObjects", "Persistence", "LiveObjectsTestSupport"]),
        .executableTarget(name: "liveobj", dependencies: ["LiveObjectsShell"]),
        .target(name: "LiveObjectsTestSupport", dependencies: ["LiveObjects"]),
        .testTarget(
            name: "LiveObjectsTests",
            dependencies: ["LiveObjects", "LiveObjectsTestSupport"]
        ),
        .testTarget(
            name: "PersistenceTests",
            dependencies: ["Persistence", "LiveObjects"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
