import LiveObjects

// The models the property-based harness drives. Between them they use every kind of property the
// engine stores: an Int and a String primary key, indexed Int, String and optional String
// properties, to-one links, a list of links, a list of primitives, a cascade list, a cascade
// to-one link, a deny link, embedded objects (to-one, list, nested, linking out) and
// LinkingObjects over each of them.

/// A node of the graph under test.
public final class PropNode: Object {
    @Persisted(primaryKey: true) public var id = 0
    @Persisted(indexed: true) public var tag = ""
    @Persisted(indexed: true) public var score = 0
    /// A to-one link (nullify).
    @Persisted public var next: PropNode?
    /// A list of links; may hold the same node twice.
    @Persisted public var friends: List<PropNode>
    /// A list of primitives.
    @Persisted public var numbers: List<Int>
    /// Deleting the node deletes these parts.
    @Persisted(deleteRule: .cascade) public var parts: List<PropPart>
    /// A part cannot be deleted while a node that survives the deletion pins it.
    @Persisted(deleteRule: .deny) public var pinned: PropPart?
    /// An embedded to-one.
    @Persisted public var note: PropNote?
    /// A list of embedded objects.
    @Persisted public var notes: List<PropNote>
    @Persisted(originProperty: "next") public var referrers: LinkingObjects<PropNode>
    @Persisted(originProperty: "friends") public var followers: LinkingObjects<PropNode>
    @Persisted(originProperty: "ref") public var mentions: LinkingObjects<PropNote>
}

/// A part held by nodes.
public final class PropPart: Object {
    @Persisted(primaryKey: true) public var id = ""
    @Persisted(indexed: true) public var label: String?
    /// A cascade to-one link: deleting the part deletes its sub-part (cycles allowed).
    @Persisted(deleteRule: .cascade) public var sub: PropPart?
    @Persisted(originProperty: "parts") public var holders: LinkingObjects<PropNode>
    @Persisted(originProperty: "pinned") public var pinners: LinkingObjects<PropNode>
    @Persisted(originProperty: "sub") public var supers: LinkingObjects<PropPart>
}

/// An embedded note; notes nest and can link to a node.
public final class PropNote: EmbeddedObject {
    @Persisted public var text = ""
    @Persisted public var ref: PropNode?
    @Persisted public var subnotes: List<PropNote>
}

/// The model types of the property-based harness.
public let propertyTestModelTypes: [Object.Type] = [PropNode.self, PropPart.self, PropNote.self]
