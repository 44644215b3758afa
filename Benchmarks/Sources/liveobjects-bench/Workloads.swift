/// One timed measurement: how long it took, and a checksum of what it read, so that the three
/// systems can be checked to have done the same work.
struct Sample: Sendable {
    var seconds: Double
    var checksum: Int
    /// The size of the file written or read (`save`, `load`).
    var fileBytes: Int? = nil
}

/// What each system implements. Every method except `insertAll`, `load` and `unload` works on
/// the store built by the last `load`.
protocol BenchSystem: AnyObject {
    static var name: String { get }
    /// Builds a fresh store holding the data set, timed, then throws it away.
    func insertAll(_ data: Dataset) async throws -> Sample
    /// Builds the store that the read workloads use.
    func load(_ data: Dataset) async throws
    /// Drops that store.
    func unload()
    func pkLookup(_ data: Dataset) async throws -> Sample
    func filterUnindexed(_ data: Dataset) async throws -> Sample
    func filterIndexedEq(_ data: Dataset) async throws -> Sample
    func indexedEqCount(_ data: Dataset) async throws -> Sample
    func toMany(_ data: Dataset) async throws -> Sample
    func inverse(_ data: Dataset) async throws -> Sample
    func freeze(_ data: Dataset) async throws -> Sample
    /// Writes the loaded data set to a file (the system's own format), timed.
    func save(_ data: Dataset) async throws -> Sample
    /// Reads everything back from the file `save` wrote (writing it first if needed), timed.
    func loadFile(_ data: Dataset) async throws -> Sample
    /// Subscribes to "dogs with age > 10 sorted by name", then updates one dog per transaction
    /// (`age = age > 10 ? 5 : 15`, so that the dog enters or leaves the result) until all of
    /// `data.notifyDogIds` are done or `budget` has passed.
    func updateNotify(_ data: Dataset, budget: Duration) async throws -> Latencies
}

/// Per update: the latency from the end of the write (just before its commit) to the subscriber
/// holding the new result, and the size of that result (checked across systems).
struct Latencies: Sendable {
    var seconds: [Double] = []
    var resultCounts: [Int] = []
}

func seconds(_ duration: Duration) -> Double {
    let (s, attoseconds) = duration.components
    return Double(s) + Double(attoseconds) * 1e-18
}

/// A checksum of a materialized filter result that does not depend on its order.
func filterChecksum(count: Int, _ rows: [(id: Int, name: String)]) -> Int {
    var sum = count
    for row in rows { sum &+= row.id &* 31 &+ row.name.utf8.count }
    return sum
}

/// A benchmark workload.
struct Workload: Sendable {
    enum Kind: Sendable {
        /// A timed operation on every system.
        case timed(usesLoadedStore: Bool)
        /// Latencies of single updates under a live query: one pass per system.
        case latency
        /// Peak resident memory, each system alone in a child process.
        case memory
        /// Not runnable yet: LiveObjects lacks the named feature.
        case pending(needs: String)
    }

    let name: String
    let kind: Kind
    let description: String
    /// The targets, as the highest acceptable ratio LiveObjects / other (time or bytes): the
    /// latest round's (issue #33's, round 4), each at least as strict as the rounds before.
    let maxRatioVsGRDB: Double?
    let maxRatioVsRaw: Double?
    /// For memory, "less than GRDB" is strict.
    var strictGRDB = false

    func run(_ system: any BenchSystem, _ data: Dataset) async throws -> Sample {
        switch name {
        case "insert_all": try await system.insertAll(data)
        case "pk_lookup": try await system.pkLookup(data)
        case "filter_unindexed": try await system.filterUnindexed(data)
        case "filter_indexed_eq": try await system.filterIndexedEq(data)
        case "indexed_eq_count": try await system.indexedEqCount(data)
        case "to_many": try await system.toMany(data)
        case "inverse": try await system.inverse(data)
        case "freeze": try await system.freeze(data)
        case "save": try await system.save(data)
        case "load": try await system.loadFile(data)
        default: fatalError("no timed implementation for \(name)")
        }
    }

    static let all: [Workload] = [
        Workload(
            name: "insert_all", kind: .timed(usesLoadedStore: false),
            description: "insert N/10 persons and N dogs (each linked to its owner) in one write transaction",
            maxRatioVsGRDB: 1.0 / 3, maxRatioVsRaw: 1.5),
        Workload(
            name: "pk_lookup", kind: .timed(usesLoadedStore: true),
            description: "100,000 random primary-key lookups of dogs, reading name and age",
            maxRatioVsGRDB: 0.1, maxRatioVsRaw: 1.3),
        Workload(
            name: "filter_unindexed", kind: .timed(usesLoadedStore: true),
            description: "dogs with age > 10 AND name CONTAINS[c] 'a': count, and materialize (id, name)",
            maxRatioVsGRDB: 0.25, maxRatioVsRaw: 0.75),
        Workload(
            name: "filter_indexed_eq", kind: .timed(usesLoadedStore: true),
            description: "10,000 lookups of dogs by exact (indexed) name, reading each match's id",
            maxRatioVsGRDB: 0.2, maxRatioVsRaw: 2),
        Workload(
            name: "indexed_eq_count", kind: .timed(usesLoadedStore: true),
            description: "10,000 lookups of dogs by exact (indexed) name, counting the matches",
            maxRatioVsGRDB: nil, maxRatioVsRaw: 1.2),
        Workload(
            name: "to_many", kind: .timed(usesLoadedStore: true),
            description: "10,000 random persons' dogs (about 10 each), reading each dog's age",
            maxRatioVsGRDB: 1.0 / 3, maxRatioVsRaw: 1.2),
        Workload(
            name: "inverse", kind: .timed(usesLoadedStore: true),
            description: "10,000 random dogs' owners, reading the owner's id and name",
            maxRatioVsGRDB: 1.0 / 3, maxRatioVsRaw: 1.2),
        Workload(
            name: "update_notify", kind: .latency,
            description:
                "with a live query \"dogs with age > 10 sorted by name\", 1,000 single-row updates, each its own transaction: latency from commit to the subscriber holding the new result (median, p99)",
            maxRatioVsGRDB: nil, maxRatioVsRaw: nil),
        Workload(
            name: "freeze", kind: .timed(usesLoadedStore: true),
            description: "take a Sendable snapshot of everything, and count the dogs in it from another task",
            maxRatioVsGRDB: nil, maxRatioVsRaw: nil),
        Workload(
            name: "save", kind: .timed(usesLoadedStore: true),
            description:
                "write everything to a file, synced: LiveObjects JSON snapshot, GRDB file database (one insert transaction), raw JSONEncoder of Codable arrays; with the file size",
            maxRatioVsGRDB: 0.2, maxRatioVsRaw: 0.1),
        Workload(
            name: "load", kind: .timed(usesLoadedStore: true),
            description:
                "read everything back from that file: LiveObjects opens the file realm, GRDB reads every row into structs, raw JSONDecoder of the Codable arrays",
            maxRatioVsGRDB: 1, maxRatioVsRaw: 0.1),
        Workload(
            name: "memory", kind: .memory,
            description: "peak resident memory per object holding the data set, each system alone in a child process",
            maxRatioVsGRDB: 1, maxRatioVsRaw: 3, strictGRDB: true),
    ]
}
