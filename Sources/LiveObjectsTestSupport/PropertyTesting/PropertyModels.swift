import Foundation
import LiveObjects

// The models the property-based harness drives. Between them they use every kind of property the
// engine stores: an Int and a String primary key, indexed Int, String and optional String
// properties, to-one links, a list of links, a list of primitives, a cascade list, a cascade
// to-one link, a deny link, embedded objects (to-one, list, nested, linking out) and
// LinkingObjects over each of them.

/// A node of the graph under test.
package final class PropNode: Object {
    @Persisted(primaryKey: true) package var id = 0
    @Persisted(indexed: true) package var tag = ""
    @Persisted(indexed: true) package var score = 0
    /// An exact decimal (digits `Double` cannot keep) and an object id, both optional.
    @Persisted package var amount: Decimal?
    @Persisted(indexed: true) package var code: ObjectID?
    /// A to-one link (nullify).
    @Persisted package var next: PropNode?
    /// A list of links; may hold the same node twice.
    @Persisted package var friends: List<PropNode>
    /// A list of primitives.
    @Persisted package var numbers: List<Int>
    /// Deleting the node deletes these parts.
    @Persisted(deleteRule: .cascade) package var parts: List<PropPart>
    /// A part cannot be deleted while a node that survives the deletion pins it.
    @Persisted(deleteRule: .deny) package var pinned: PropPart?
    /// An embedded to-one.
    @Persisted package var note: PropNote?
    /// A list of embedded objects.
    @Persisted package var notes: List<PropNote>
    /// A set of strings, kept in the order members were first inserted.
    @Persisted package var labels: MutableSet<String>
    /// A set of links: a deleted node leaves every set that holds it.
    @Persisted package var allies: MutableSet<PropNode>
    /// A map whose keys may hold nil.
    @Persisted package var attrs: Map<String, Int?>
    /// A map of links: a deleted node leaves its keys with nil.
    @Persisted package var mates: Map<String, PropNode?>
    /// A value of any kind.
    @Persisted package var payload: AnyValue
    @Persisted(originProperty: "next") var referrers: LinkingObjects<PropNode>
    @Persisted(originProperty: "friends") var followers: LinkingObjects<PropNode>
    @Persisted(originProperty: "ref") var mentions: LinkingObjects<PropNote>
    @Persisted(originProperty: "allies") var admirers: LinkingObjects<PropNode>
    @Persisted(originProperty: "mates") var matedBy: LinkingObjects<PropNode>
}

/// A part held by nodes.
package final class PropPart: Object {
    @Persisted(primaryKey: true) package var id = ""
    @Persisted(indexed: true) package var label: String?
    /// A cascade to-one link: deleting the part deletes its sub-part (cycles allowed).
    @Persisted(deleteRule: .cascade) package var sub: PropPart?
    @Persisted(originProperty: "parts") package var holders: LinkingObjects<PropNode>
    @Persisted(originProperty: "pinned") var pinners: LinkingObjects<PropNode>
    @Persisted(originProperty: "sub") var supers: LinkingObjects<PropPart>
}

/// An embedded note; notes nest and can link to a node.
package final class PropNote: EmbeddedObject {
    @Persisted package var text = ""
    @Persisted package var ref: PropNode?
    @Persisted var subnotes: List<PropNote>
}

/// The model types of the property-based harness.
package let propertyTestModelTypes: [Object.Type] = [PropNode.self, PropPart.self, PropNote.self]
