/// A runnable walkthrough: one use of LiveObjects shown step by step, checking its own results.
///
/// To add one, write a type conforming to this protocol in its own file under `Walkthroughs/`
/// and list it in ``walkthroughs``.
protocol Walkthrough: SendableMetatype {
    /// The name given on the command line (`swift run Playground NAME`).
    static var name: String { get }
    /// What it shows, in one line.
    static var summary: String { get }
    /// Runs the walkthrough, telling each step to `narrator` and checking the results.
    ///
    /// - Throws: ``CheckFailure`` when a result is not what it should be; any other error ends
    ///   the walkthrough as a failure too.
    static func run(_ narrator: Narrator) async throws
}

/// A walkthrough as the command line sees it.
struct WalkthroughEntry: Sendable {
    let name: String
    let summary: String
    let run: @Sendable (Narrator) async throws -> Void

    init<W: Walkthrough>(_ type: W.Type) {
        name = W.name
        summary = W.summary
        run = { try await W.run($0) }
    }
}

/// Every walkthrough, in the order they are listed and run.
let walkthroughs: [WalkthroughEntry] = [
    WalkthroughEntry(ModelsWalkthrough.self),
    WalkthroughEntry(RealmsWalkthrough.self),
    WalkthroughEntry(DALWalkthrough.self),
    WalkthroughEntry(MigrationWalkthrough.self),
    WalkthroughEntry(OfflineWalkthrough.self),
    WalkthroughEntry(LiveWalkthrough.self),
]
