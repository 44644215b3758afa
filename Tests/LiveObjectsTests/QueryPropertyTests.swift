import Foundation
import LiveObjects
import Testing

// MARK: - Models of the randomized query tests

/// An object with one property of each kind the query engine handles.
final class QPItem: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var int = 0
    @Persisted var optInt: Int?
    @Persisted var double = 0.0
    @Persisted var string = ""
    @Persisted var optString: String?
    @Persisted var flag = false
    @Persisted var date = Date(timeIntervalSinceReferenceDate: 0)
    @Persisted(indexed: true) var code = ""
    @Persisted var owner: QPOwner?
    @Persisted var tags: List<QPTag>
    @Persisted(originProperty: "favorite") var fans: LinkingObjects<QPOwner>
    /// Not persisted.
    var scratch = 0
}

/// The owner of items (a to-one link target, with a link back).
final class QPOwner: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var name = ""
    @Persisted var score: Int?
    @Persisted var favorite: QPItem?
    @Persisted(originProperty: "owner") var items: LinkingObjects<QPItem>
}

/// The elements of items' lists.
final class QPTag: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var label = ""
    @Persisted var weight = 0
    @Persisted var rating: Double?
}

let queryPropertyModelTypes: [Object.Type] = [QPItem.self, QPOwner.self, QPTag.self]
