import Foundation

extension Realm {
    /// Creates (or updates) an object from a JSON object, inside a write, and returns it managed.
    ///
    /// The keys are property names. Values are read as the properties' Swift types with
    /// `decoder`'s strategies (with the defaults: a `Date` is a number of seconds since
    /// 2001-01-01, `Data` is Base64, a `UUID` a string), so the output of `JSONEncoder` for a
    /// model object reads back. A link or a list element of a link list is either the target's
    /// primary key (linking the existing object) or a nested JSON object (creating the target,
    /// or updating it under the same policy). Missing keys take their defaults on a new object
    /// and are left alone on an updated one; `LinkingObjects` keys are ignored.
    ///
    /// ```swift
    /// try await realm.write { realm in
    ///     _ = try realm.create(Dog.self, json: Data(#"{"id": 1, "name": "Rex", "owner": 7}"#.utf8))
    ///     _ = try realm.create(Dog.self, json: Data(#"{"id": 1, "owner": {"id": 8, "name": "Ann"}}"#.utf8), update: .modified)
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - type: The model class.
    ///   - json: A JSON object, UTF-8.
    ///   - update: What to do when an object with the same primary key exists.
    ///   - decoder: Supplies the date, data, non-conforming float and key strategies.
    /// - Returns: The created or updated object.
    /// - Throws: ``LiveObjectsError``, naming the type and property where one is involved:
    ///   `corruptFile` for text that is not JSON; `typeMismatch` for a value of the wrong type
    ///   (or `null` for a non-optional property); `unknownProperty`; `missingValue` for a
    ///   missing primary key, or for a link to a primary key that does not exist (naming the
    ///   linked type and the key); and the errors of ``create(_:value:update:)``. On error
    ///   nothing is created.
    @discardableResult
    public func create<T: Object>(
        _ type: T.Type, json: Data, update: UpdatePolicy = .error, decoder: JSONDecoder = JSONDecoder()
    ) throws(LiveObjectsError) -> T {
        try createFromJSON(type, json: json, isArray: false, update: update, decoder: decoder)[0]
    }

    /// Creates (or updates) objects from a JSON array of JSON objects, inside a write; see
    /// ``create(_:json:update:decoder:)``. Either all are created or none.
    ///
    /// - Returns: The created or updated objects, in the array's order.
    /// - Throws: as ``create(_:json:update:decoder:)``; a message about an element starts with its
    ///   index (`element 2: …`).
    @discardableResult
    public func create<T: Object>(
        _ type: T.Type, jsonArray json: Data, update: UpdatePolicy = .error,
        decoder: JSONDecoder = JSONDecoder()
    ) throws(LiveObjectsError) -> [T] {
        try createFromJSON(type, json: json, isArray: true, update: update, decoder: decoder)
    }

    private func createFromJSON<T: Object>(
        _ type: T.Type, json: Data, isArray: Bool, update: UpdatePolicy, decoder: JSONDecoder
    ) throws(LiveObjectsError) -> [T] {
        try store.requireWrite()
        let table = try store.table(for: type)
        guard !table.schema.isEmbedded else {
            throw LiveObjectsError(
                .invalidOperation, "an embedded object is created by setting it on its parent",
                objectType: table.name)
        }
        let objects = try JSONInput.decode(
            json, schema: table.schema, schemas: store.tablesByName.mapValues(\.schema), isArray: isArray,
            decoder: decoder)
        let rows = try atomically { () throws(LiveObjectsError) -> [Int32] in
            var rows: [Int32] = []
            for (i, values) in objects.enumerated() {
                do throws(LiveObjectsError) {
                    rows.append(try store.create(table, from: .dictionary(values), context: AddContext(update: update)))
                } catch {
                    var error = error
                    if isArray { error.message = "element \(i): " + error.message }
                    throw error
                }
            }
            return rows
        }
        return rows.map { row in
            let object = T()
            object._handle = ObjectHandle(store: store, table: table, row: row, generation: table.generation(row))
            return object
        }
    }
}
