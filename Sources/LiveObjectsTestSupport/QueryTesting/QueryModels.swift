import Foundation
import LiveObjects

// The models of the randomized query tests (and of the Foundation predicate tests).

/// An object with one property of each kind the query engine handles.
package final class QPItem: Object {
    @Persisted(primaryKey: true) package var id = 0
    @Persisted package var int = 0
    @Persisted package var optInt: Int?
    @Persisted package var double = 0.0
    @Persisted package var string = ""
    @Persisted package var optString: String?
    @Persisted package var flag = false
    @Persisted package var date = Date(timeIntervalSinceReferenceDate: 0)
    @Persisted(indexed: true) package var code = ""
    @Persisted package var price = Decimal(0)
    @Persisted package var optPrice: Decimal?
    @Persisted package var ref = QueryWorld.objectIDs[0]
    @Persisted package var payload: AnyValue
    @Persisted package var owner: QPOwner?
    @Persisted package var tags: List<QPTag>
    @Persisted package var settings: Map<String, String>
    /// A map of objects: owners (or nil) by key.
    @Persisted package var pals: Map<String, QPOwner?>
    /// A map of `AnyValue`s: values of any kind by key.
    @Persisted package var extras: Map<String, AnyValue>
    @Persisted(originProperty: "favorite") package var fans: LinkingObjects<QPOwner>
    /// Not persisted.
    package var scratch = 0
}

/// The owner of items (a to-one link target, with a link back).
package final class QPOwner: Object {
    @Persisted(primaryKey: true) package var id = 0
    @Persisted package var name = ""
    @Persisted package var score: Int?
    @Persisted package var favorite: QPItem?
    @Persisted(originProperty: "owner") package var items: LinkingObjects<QPItem>
}

/// The elements of items' lists.
package final class QPTag: Object {
    @Persisted(primaryKey: true) package var id = 0
    @Persisted package var label = ""
    @Persisted package var weight = 0
    @Persisted package var rating: Double?
}

/// The model types of the randomized query tests.
let queryPropertyModelTypes: [Object.Type] = [QPItem.self, QPOwner.self, QPTag.self]
