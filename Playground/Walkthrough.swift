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
    /// The options it takes after its name, as a usage line (`--server URL --token T`); nil
    /// for none.
    static var options: String? { get }
    /// Runs the walkthrough with options given on the command line (only called with some).
    ///
    /// - Throws: ``UsageError`` for options it does not take; as ``run(_:)``.
    static func run(_ narrator: Narrator, options: [String]) async throws
}

extension Walkthrough {
    static var options: String? { nil }
    static func run(_ narrator: Narrator, options: [String]) async throws {
        throw UsageError(message: "the walkthrough '\(name)' takes no options")
    }
}

/// Options a walkthrough does not take, or takes without their value.
struct UsageError: Error {
    var message: String
}

/// A walkthrough as the command line sees it.
struct WalkthroughEntry: Sendable {
    let name: String
    let summary: String
    let options: String?
    let run: @Sendable (Narrator, [String]) async throws -> Void

    init<W: Walkthrough>(_ type: W.Type) {
        name = W.name
        summary = W.summary
        options = W.options
        run = { narrator, options in
            if options.isEmpty {
                try await W.run(narrator)
            } else {
                try await W.run(narrator, options: options)
            }
        }
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
    WalkthroughEntry(ViewModelWalkthrough.self),
]
