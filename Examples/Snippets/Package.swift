// swift-tools-version: 6.0
import Foundation
import PackageDescription

// The Swift blocks of the documentation, one executable target each, written to Sources/ by
// `scripts/check-snippets.py` (which also builds and runs them). The sources are generated, not
// committed: run the script first.
let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
let root = directory.deletingLastPathComponent().deletingLastPathComponent()
let snippets = (try? FileManager.default.contentsOfDirectory(atPath: directory.appendingPathComponent("Sources").path))
    ?? []

// A package depended on by path is known by its folder's name.
let liveObjects = root.standardizedFileURL.lastPathComponent.lowercased()

let package = Package(
    name: "Snippets",
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    dependencies: [.package(path: "../..")],
    targets: snippets.filter { !$0.hasPrefix(".") }.sorted().map { name in
        .executableTarget(
            name: name,
            dependencies: [
                .product(name: "LiveObjects", package: liveObjects),
                .product(name: "Persistence", package: liveObjects),
                .product(name: "LiveObjectsSync", package: liveObjects),
            ]
        )
    },
    swiftLanguageModes: [.v6]
)
