// The models of the sync tests, in one place for the root package's sync tests and the sync
// server's (its tests, its device program and its benchmark): a product for tests, not for apps.
import Foundation
import LiveObjects
import LiveObjectsSync

/// A discount-card holder.
public final class Holder: Object, SyncableObject {
    /// The primary key.
    @Persisted(primaryKey: true) public var id = ""
    /// The server's id of the object, once it has one.
    @Persisted public var serverID: String?
    /// The holder's name.
    @Persisted public var name = ""
}

/// A discount card, owned by a holder; its photo is a large payload (sent as a change of its
/// own when it is not empty).
public final class Card: Object, SyncableObject {
    /// The primary key.
    @Persisted(primaryKey: true) public var id = ""
    /// The server's id of the object, once it has one.
    @Persisted public var serverID: String?
    /// The card's name.
    @Persisted public var name = ""
    /// The discount, in percent.
    @Persisted public var discount = 0
    /// The card's holder.
    @Persisted public var owner: Holder?
    /// A picture of the card.
    @Persisted public var photo = Data()

    /// The photo travels last, as a change of its own.
    public static var largePayloadProperties: Set<String> { ["photo"] }
}

/// A board whose lists several devices edit concurrently: plain values and links.
public final class Board: Object, SyncableObject {
    /// The primary key.
    @Persisted(primaryKey: true) public var id = ""
    /// The server's id of the object, once it has one.
    @Persisted public var serverID: String?
    /// A list of plain values.
    @Persisted public var tags: List<String>
    /// A list of links.
    @Persisted public var cards: List<Card>
}

/// SplitMix64: a small seeded generator, so that a randomized sync test replays from its seed
/// (the same seed draws the same numbers in every process of a test).
public struct SyncSeededGenerator: RandomNumberGenerator, Sendable {
    /// The state: the seed, then one step per draw.
    public var state: UInt64

    /// Creates a generator from a seed.
    public init(seed: UInt64) { state = seed }

    /// The next draw.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// A shelf: a list of plain values and a list of links, merged per operation.
public final class Shelf: Object, SyncableObject {
    /// The primary key.
    @Persisted(primaryKey: true) public var id = ""
    /// The server's id of the object, once it has one.
    @Persisted public var serverID: String?
    /// Tags, in order.
    @Persisted public var tags: List<String>
    /// Holders, in order.
    @Persisted public var holders: List<Holder>
}

/// A bin: a set of plain values and a set of links, merged per member.
public final class Bin: Object, SyncableObject {
    /// The primary key.
    @Persisted(primaryKey: true) public var id = ""
    /// The server's id of the object, once it has one.
    @Persisted public var serverID: String?
    /// Labels, each once.
    @Persisted public var labels: MutableSet<String>
    /// Keepers, each once.
    @Persisted public var keepers: MutableSet<Holder>
}

/// A panel: maps of plain values and a map of objects, merged per key, a style of any kind,
/// replaced whole, and a list, a set and a map of values of any kind.
public final class Panel: Object, SyncableObject {
    /// The primary key.
    @Persisted(primaryKey: true) public var id = ""
    /// The server's id of the object, once it has one.
    @Persisted public var serverID: String?
    /// Settings by name.
    @Persisted public var settings: Map<String, String>
    /// Limits by name, nil for none.
    @Persisted public var limits: Map<String, Int?>
    /// Holders by role, nil for a role with no holder (or whose holder was deleted).
    @Persisted public var keepers: Map<String, Holder?>
    /// A style of any kind (nested lists and dictionaries included): an `AnyValue`, replaced
    /// whole, the later push winning.
    @Persisted public var style: AnyValue
    /// Items of any kind, in order: a `List<AnyValue>`, merged per operation.
    @Persisted public var items: List<AnyValue>
    /// Marks of any kind, each once: a `MutableSet<AnyValue>`, merged per member.
    @Persisted public var marks: MutableSet<AnyValue>
    /// Extras of any kind by name: a `Map<String, AnyValue>`, merged per key.
    @Persisted public var extras: Map<String, AnyValue>
}
