import Foundation
import LiveObjects

// The models of the randomized query tests (and of the Foundation predicate tests).

/// An object with one property of each kind the query engine handles.
public final class QPItem: Object {
    @Persisted(primaryKey: true) public var id = 0
    @Persisted public var int = 0
    @Persisted public var optInt: Int?
    @Persisted public var double = 0.0
    @Persisted public var string = ""
    @Persisted public var optString: String?
    @Persisted public var flag = false
    @Persisted public var date = Date(timeIntervalSinceReferenceDate: 0)
    @Persisted(indexed: true) public var code = ""
    @Persisted public var owner: QPOwner?
    @Persisted public var tags: List<QPTag>
    @Persisted(originProperty: "favorite") public var fans: LinkingObjects<QPOwner>
    /// Not persisted.
    public var scratch = 0
}

/// The owner of items (a to-one link target, with a link back).
public final class QPOwner: Object {
    @Persisted(primaryKey: true) public var id = 0
    @Persisted public var name = ""
    @Persisted public var score: Int?
    @Persisted public var favorite: QPItem?
    @Persisted(originProperty: "owner") public var items: LinkingObjects<QPItem>
}

/// The elements of items' lists.
public final class QPTag: Object {
    @Persisted(primaryKey: true) public var id = 0
    @Persisted public var label = ""
    @Persisted public var weight = 0
    @Persisted public var rating: Double?
}

/// The model types of the randomized query tests.
public let queryPropertyModelTypes: [Object.Type] = [QPItem.self, QPOwner.self, QPTag.self]
