import LiveObjects

// The random side of the notification scenario: the initial data, random subscriptions and
// random write operations, each recording what it changes in a `WriteRecorder`.

enum NotificationGenerator {
    static let names = ["Rex", "rex", "Fido", "ball", "Bone", "apple", "Zed", "émile", "Emile", "bob"]
    static let cities = ["Oslo", "oslo", "Rome", "Lima"]
    static let clubNames = ["c1", "c2", "c3"]

    static func populate(_ r: isolated Realm, _ rng: inout SeededRandomNumberGenerator) throws -> Int {
        var id = 1
        var people: [Person] = []
        for _ in 0..<rng.int(3...5) {
            let person = try r.create(
                Person.self, value: ["id": id, "name": rng.pick(names)!, "age": rng.int(0...6)])
            if rng.chance(0.6) {
                let address = Address()
                address.city = rng.pick(cities)!
                address.street = "s\(id)"
                person.address = address
            }
            people.append(person)
            id += 1
        }
        var toys: [DogToy] = []
        for _ in 0..<rng.int(3...6) {
            toys.append(try r.create(DogToy.self, value: ["id": id, "name": rng.pick(names)!]))
            id += 1
        }
        for _ in 0..<rng.int(4...9) {
            let dog = try r.create(Dog.self, value: ["id": id, "name": rng.pick(names)!, "age": rng.int(0...6)])
            id += 1
            if rng.chance(0.7) { dog.owner = rng.pick(people) }
            for _ in 0..<rng.int(0...2) { dog.toys.append(rng.pick(toys)!) }
            for _ in 0..<rng.int(0...2) { rng.pick(people)!.dogs.append(dog) }
        }
        for name in clubNames where rng.chance(0.8) {
            let club = try r.create(DogClub.self, value: ["name": name])
            for _ in 0..<rng.int(0...3) { club.members.append(rng.pick(people)!) }
            if rng.chance(0.4) { club.president = rng.pick(people) }
        }
        return id
    }

    static func randomSpec(_ r: isolated Realm, _ rng: inout SeededRandomNumberGenerator) -> SubSpec? {
        let roll = rng.int(0...99)
        if roll < 40 {
            return SubSpec(
                kind: .results(
                    type: "Dog", filter: rng.pick(dogFilters)!, sorts: rng.pick(dogSorts)!,
                    distinct: [], limit: nil, offset: 0), keyPaths: rng.chance(0.5) ? nil : rng.pick(dogKeyPaths)!)
        } else if roll < 50 {
            return SubSpec(
                kind: .results(
                    type: "Person", filter: rng.pick(personFilters)!, sorts: rng.pick(personSorts)!,
                    distinct: [], limit: nil, offset: 0), keyPaths: rng.chance(0.5) ? nil : rng.pick(personKeyPaths)!)
        } else if roll < 55 {
            let type = rng.chance(0.5) ? "DogToy" : "DogClub"
            let filter =
                type == "DogToy"
                ? rng.pick([nil, "name BEGINSWITH[c] 'b'", "dogs.@count > 1"])!
                : rng.pick([nil, "members.@count > 1", "president != nil"])!
            let sorts = rng.chance(0.5) ? [] : [SortField("name", ascending: rng.chance(0.5))]
            let paths: [String]? =
                rng.chance(0.5)
                ? nil
                : (type == "DogToy"
                    ? rng.pick([["name"], ["dogs.name"], ["dogs"]])! : rng.pick([["members.name"], ["president"]])!)
            return SubSpec(
                kind: .results(type: type, filter: filter, sorts: sorts, distinct: [], limit: nil, offset: 0),
                keyPaths: paths)
        } else if roll < 65 {
            // Sliced or distinct results: re-evaluated.
            let distinct: [String] = rng.chance(0.3) ? [rng.pick(["age", "owner.name", "name"])!] : []
            let limit: Int? = rng.chance(0.6) ? rng.int(1...4) : nil
            let offset = rng.chance(0.4) ? rng.int(1...3) : 0
            return SubSpec(
                kind: .results(
                    type: "Dog", filter: rng.pick(dogFilters)!, sorts: rng.pick(dogSorts)!,
                    distinct: distinct, limit: distinct.isEmpty && limit == nil && offset == 0 ? 2 : limit,
                    offset: offset),
                keyPaths: rng.chance(0.5) ? nil : rng.pick(dogKeyPaths)!)
        } else if roll < 82 {
            let choices: [(String, String, String)] = [
                ("Person", "dogs", "Dog"), ("Dog", "toys", "DogToy"), ("DogClub", "members", "Person"),
                ("Dog", "walkers", "Person"), ("DogToy", "dogs", "Dog"), ("Person", "clubs", "DogClub"),
            ]
            let (ownerType, property, elementType) = rng.pick(choices)!
            guard let owner = rng.pick(NotificationModel.live(r, ownerType)) else { return nil }
            var paths: [String]?
            if !rng.chance(0.6) {
                switch elementType {
                case "Dog": paths = rng.pick(dogKeyPaths)!
                case "Person": paths = rng.pick(personKeyPaths)!
                case "DogToy": paths = rng.pick([["name"], ["dogs.name"]])!
                default: paths = rng.pick([["members.name"], ["president"], ["name"]])!
                }
            }
            return SubSpec(
                kind: .list(ownerType: ownerType, owner: owner.key, property: property, elementType: elementType),
                keyPaths: paths)
        } else if roll < 95 {
            let type = rng.pick(["Dog", "Dog", "Person", "Person", "DogToy", "DogClub"])!
            guard let object = rng.pick(NotificationModel.live(r, type)) else { return nil }
            let properties: [String] =
                switch type {
                case "Dog": ["name", "age", "owner", "toys", "walkers"]
                case "Person": ["name", "age", "dogs", "address", "clubs"]
                case "DogToy": ["name", "dogs"]
                default: ["members", "president"]
                }
            let paths: [String]? = rng.chance(0.5) ? nil : properties.filter { _ in rng.chance(0.4) }
            return SubSpec(kind: .object(type: type, key: object.key), keyPaths: paths)
        } else {
            return SubSpec(kind: .realm, keyPaths: nil)
        }
    }

    static let dogFilters: [String?] = [
        nil, nil, "age > 3", "age <= 2 OR name BEGINSWITH[c] 'r'", "owner.age > 3", "owner == nil",
        "ANY toys.name == 'ball'", "walkers.@count > 0", "ANY walkers.clubs.name == 'c1'",
        "owner.address.city ==[c] 'oslo'", "toys.@count >= 1 AND age < 5", "name == 'Rex'",
        "SUBQUERY(toys, $t, $t.name BEGINSWITH[c] 'b').@count > 0", "NOT (age BETWEEN {2, 4})",
    ]
    static let dogSorts: [[SortField]] = [
        [], [SortField("age")], [SortField("age", ascending: false)], [SortField("name", comparison: .caseInsensitive)],
        [SortField("age"), SortField("name")],
        [SortField("name", ascending: false, comparison: .natural), SortField("age")],
        [SortField("owner.name")],
        [SortField("owner.age", ascending: false), SortField("name", comparison: .caseInsensitive)],
        [SortField("age", ascending: false), SortField("owner.name", ascending: false)],
    ]
    static let dogKeyPaths: [[String]] = [
        ["name"], ["age"], ["owner"], ["owner.name"], ["toys"], ["toys.name"], ["walkers"], ["walkers.name"],
        ["name", "owner.age"], ["walkers.clubs.name"], ["owner.address.city"],
    ]
    static let personFilters: [String?] = [
        nil, "age > 3", "ANY dogs.age > 4", "address.city == 'Oslo'", "clubs.@count > 0", "dogs.@count == 0",
    ]
    static let personSorts: [[SortField]] = [
        [], [SortField("name")], [SortField("age", ascending: false), SortField("name")], [SortField("address.city")],
    ]
    static let personKeyPaths: [[String]] = [
        ["name"], ["dogs"], ["dogs.name"], ["address.city"], ["address"], ["clubs"], ["clubs.name"],
        ["age", "dogs.age"],
    ]

    // MARK: Operations

    /// Runs one random operation, recording what it changes. Throws only when the test decided
    /// to let an operation's error end the write.
    static func operation(
        _ r: isolated Realm, _ rng: inout SeededRandomNumberGenerator, _ rec: WriteRecorder, nextId: inout Int,
        propagateErrors: Bool
    ) throws {
        let roll = rng.int(0...99)
        switch roll {
        case 0..<10: try createObject(r, &rng, rec, nextId: &nextId)
        case 10..<20: try deleteObject(r, &rng, rec, propagate: propagateErrors)
        case 20..<40: setScalar(r, &rng, rec)
        case 40..<48: setLink(r, &rng, rec)
        case 48..<80: try listOperation(r, &rng, rec, propagate: propagateErrors)
        case 80..<86: setAndReset(r, &rng, rec)
        case 86..<92: typedOperation(r, &rng, rec)
        case 92..<99: setAddress(r, &rng, rec)
        default:
            if NotificationModel.live(r, "Dog").count > 60 {
                try deleteDogs(r, &rng, rec)
            } else {
                try createDogs(r, &rng, rec, nextId: &nextId)
            }
        }
    }

    static func createObject(
        _ r: isolated Realm, _ rng: inout SeededRandomNumberGenerator, _ rec: WriteRecorder, nextId: inout Int
    )
        throws
    {
        let id = nextId
        nextId += 1
        switch rng.int(0...3) {
        case 0, 1:
            var value: [String: PropertyValue] = [
                "id": .int(Int64(id)), "name": .string(rng.pick(names)!), "age": .int(Int64(rng.int(0...6))),
            ]
            let owner = rng.chance(0.6) ? rng.pick(NotificationModel.live(r, "Person")) : nil
            if let owner { value["owner"] = .object(owner.key) }
            let toys = (0..<rng.int(0...2)).compactMap { _ in rng.pick(NotificationModel.live(r, "DogToy")) }
            value["toys"] = .list(toys.map { .object($0.key) })
            let dog = try r.dynamicCreate("Dog", value: value)
            let ref = ObjRef(type: "Dog", key: dog.key)
            rec.record.inserted.insert(ref)
            for toy in toys { rec.linkChanged(ref, "toys", toy) }
            rec.log("create \(ref) \(value)")
            if rng.chance(0.5), let walker = rng.pick(NotificationModel.live(r, "Person")) {
                try r.dynamicObject(ofType: "Person", key: walker.key)!.append(.object(dog.key), to: "dogs")
                rec.touch(walker, "dogs")
                rec.linkChanged(walker, "dogs", ref)
                rec.log("append \(ref) to \(walker).dogs")
            }
        case 2:
            let person = try r.dynamicCreate(
                "Person",
                value: ["id": .int(Int64(id)), "name": .string(rng.pick(names)!), "age": .int(Int64(rng.int(0...6)))])
            let ref = ObjRef(type: "Person", key: person.key)
            rec.record.inserted.insert(ref)
            rec.log("create \(ref)")
            if rng.chance(0.5) {
                let address = try person.setEmbedded("address", values: ["city": .string(rng.pick(cities)!)])
                rec.record.inserted.insert(ObjRef(type: "Address", key: address.key))
                rec.log("  with address \(address.key)")
            }
            if rng.chance(0.5), let club = rng.pick(NotificationModel.live(r, "DogClub")) {
                try NotificationModel.object(r, club)!.append(.object(person.key), to: "members")
                rec.touch(club, "members")
                rec.linkChanged(club, "members", ref)
                rec.log("  member of \(club)")
            }
        default:
            let toy = try r.dynamicCreate("DogToy", value: ["id": .int(Int64(id)), "name": .string(rng.pick(names)!)])
            let ref = ObjRef(type: "DogToy", key: toy.key)
            rec.record.inserted.insert(ref)
            rec.log("create \(ref)")
            if rng.chance(0.6), let dog = rng.pick(NotificationModel.live(r, "Dog")) {
                try NotificationModel.object(r, dog)!.append(.object(toy.key), to: "toys")
                rec.touch(dog, "toys")
                rec.linkChanged(dog, "toys", ref)
                rec.log("  into \(dog).toys")
            }
        }
    }

    /// Deletes an object, predicting delete rules: embedded children and cascade targets go too;
    /// a deny link from outside refuses everything.
    static func deleteObject(
        _ r: isolated Realm, _ rng: inout SeededRandomNumberGenerator, _ rec: WriteRecorder, propagate: Bool
    )
        throws
    {
        let type = rng.pick(["Dog", "Dog", "Person", "DogToy", "DogClub"])!
        guard let root = rng.pick(NotificationModel.live(r, type)) else { return }
        try delete(r, [root], rec, propagate: propagate) { () throws(LiveObjectsError) in
            try r.delete(NotificationModel.object(r, root)!)
        }
    }

    /// Deletes most dogs at once: a bulk change for the collections of dogs.
    static func deleteDogs(_ r: isolated Realm, _ rng: inout SeededRandomNumberGenerator, _ rec: WriteRecorder) throws {
        let age = rng.int(0...1)
        let dogs = r.objects(Dog.self).filter { $0.age >= age }
        guard !dogs.isEmpty else { return }
        try delete(r, dogs.map { ObjRef(type: "Dog", key: $0.objectKey!) }, rec, propagate: false) {
            () throws(LiveObjectsError) in
            try r.delete(dogs)
        }
    }

    /// Runs a deletion of `roots`, recording what the delete rules predict: embedded children and
    /// cascade targets go too; links to the doomed objects are removed; a deny link from outside
    /// refuses everything.
    static func delete(
        _ r: isolated Realm, _ roots: [ObjRef], _ rec: WriteRecorder, propagate: Bool,
        _ perform: () throws(LiveObjectsError) -> Void
    ) throws {
        var doomed = Set<ObjRef>()
        var stack = roots
        while let ref = stack.popLast() {
            guard doomed.insert(ref).inserted else { continue }
            for p in r.schema[ref.type]!.properties where p.type == .object {
                if r.schema[p.objectType!]!.isEmbedded || p.deleteRule == .cascade {
                    stack += NotificationModel.linked(r, ref, p.name)
                }
            }
        }
        var denied = false
        var incomingLinks: [(ObjRef, String)] = []
        for ref in doomed {
            for (source, property) in NotificationModel.incoming(r, ref) where !doomed.contains(source) {
                if r.schema[source.type]![property]!.deleteRule == .deny { denied = true }
                incomingLinks.append((source, property))
            }
        }
        var outgoingLinks: [(ObjRef, String, ObjRef)] = []
        for ref in doomed {
            for p in r.schema[ref.type]!.properties where p.type == .object {
                for target in NotificationModel.linked(r, ref, p.name) where !doomed.contains(target) {
                    outgoingLinks.append((ref, p.name, target))
                }
            }
        }
        let names = roots.count > 3 ? "\(roots.count) objects" : "\(roots)"
        rec.log(
            "delete \(names) (doomed \(doomed.count > 6 ? "\(doomed.count) objects" : "\(doomed.sorted { $0.description < $1.description })"), denied \(denied))"
        )
        do {
            try perform()
            if denied { rec.problem("deleting \(names) should have been denied") }
        } catch {
            if !denied || error.code != .deleteDenied { rec.problem("deleting \(names) failed unexpectedly: \(error)") }
            if propagate { throw error }
            return
        }
        for (source, property) in incomingLinks { rec.touch(source, property) }
        for (source, property, target) in outgoingLinks { rec.linkChanged(source, property, target) }
        rec.record.deleted.formUnion(doomed)
    }

    /// Creates many dogs at once: a bulk change for the collections of dogs.
    static func createDogs(
        _ r: isolated Realm, _ rng: inout SeededRandomNumberGenerator, _ rec: WriteRecorder, nextId: inout Int
    )
        throws
    {
        let people = NotificationModel.live(r, "Person")
        let count = rng.int(65...80)
        for _ in 0..<count {
            var value: [String: PropertyValue] = [
                "id": .int(Int64(nextId)), "name": .string(rng.pick(names)!), "age": .int(Int64(rng.int(0...6))),
            ]
            nextId += 1
            if let owner = rng.pick(people), rng.chance(0.7) { value["owner"] = .object(owner.key) }
            let dog = try r.dynamicCreate("Dog", value: value)
            rec.record.inserted.insert(ObjRef(type: "Dog", key: dog.key))
        }
        rec.log("create \(count) dogs")
    }

    static func scalarTargets(_ r: isolated Realm) -> [(ObjRef, String, [PropertyValue])] {
        let nameValues = names.map { PropertyValue.string($0) }
        let ages = (0...6).map { PropertyValue.int(Int64($0)) }
        var targets: [(ObjRef, String, [PropertyValue])] = []
        for dog in NotificationModel.live(r, "Dog") { targets += [(dog, "name", nameValues), (dog, "age", ages)] }
        for person in NotificationModel.live(r, "Person") {
            targets += [(person, "name", nameValues), (person, "age", ages)]
        }
        for toy in NotificationModel.live(r, "DogToy") { targets.append((toy, "name", nameValues)) }
        for address in NotificationModel.live(r, "Address") {
            targets.append((address, "city", cities.map { .string($0) }))
        }
        return targets
    }

    static func setScalar(_ r: isolated Realm, _ rng: inout SeededRandomNumberGenerator, _ rec: WriteRecorder) {
        guard let (ref, property, values) = rng.pick(scalarTargets(r)) else { return }
        let object = NotificationModel.object(r, ref)!
        let value = rng.pick(values)!
        if object[property] != value { rec.touch(ref, property) }
        rec.log("set \(ref).\(property) = \(value) (was \(object[property]))")
        do { try object.set(property, to: value) } catch { rec.problem("set failed: \(error)") }
    }

    /// Sets a property to another value and back: the changeset still reports it.
    static func setAndReset(_ r: isolated Realm, _ rng: inout SeededRandomNumberGenerator, _ rec: WriteRecorder) {
        guard let (ref, property, values) = rng.pick(scalarTargets(r)) else { return }
        let object = NotificationModel.object(r, ref)!
        let old = object[property]
        guard let other = rng.pick(values.filter { $0 != old }) else { return }
        rec.touch(ref, property)
        rec.log("set \(ref).\(property) = \(other) and back to \(old)")
        do {
            try object.set(property, to: other)
            try object.set(property, to: old)
        } catch { rec.problem("set failed: \(error)") }
    }

    static func setLink(_ r: isolated Realm, _ rng: inout SeededRandomNumberGenerator, _ rec: WriteRecorder) {
        let (type, property) = rng.chance(0.7) ? ("Dog", "owner") : ("DogClub", "president")
        guard let source = rng.pick(NotificationModel.live(r, type)) else { return }
        let target = rng.chance(0.2) ? nil : rng.pick(NotificationModel.live(r, "Person"))
        let object = NotificationModel.object(r, source)!
        let old = NotificationModel.linked(r, source, property).first
        if old != target {
            rec.touch(source, property)
            if let old { rec.linkChanged(source, property, old) }
            if let target { rec.linkChanged(source, property, target) }
        }
        rec.log(
            "set \(source).\(property) = \(target.map(\.description) ?? "nil") (was \(old.map(\.description) ?? "nil"))"
        )
        do { try object.set(property, to: target.map { .object($0.key) } ?? .null) } catch {
            rec.problem("link failed: \(error)")
        }
    }

    static func setAddress(_ r: isolated Realm, _ rng: inout SeededRandomNumberGenerator, _ rec: WriteRecorder) {
        guard let person = rng.pick(NotificationModel.live(r, "Person")) else { return }
        let object = NotificationModel.object(r, person)!
        let old = NotificationModel.linked(r, person, "address").first
        do {
            if rng.chance(0.3) {
                rec.log("clear \(person).address (was \(old.map(\.description) ?? "nil"))")
                try object.set("address", to: .null)
                if let old {
                    rec.touch(person, "address")
                    rec.record.deleted.insert(old)
                }
            } else {
                let address = try object.setEmbedded(
                    "address", values: ["city": .string(rng.pick(cities)!), "street": "x"])
                let new = ObjRef(type: "Address", key: address.key)
                rec.log("new address \(new) for \(person) (was \(old.map(\.description) ?? "nil"))")
                rec.touch(person, "address")
                rec.record.inserted.insert(new)
                if let old { rec.record.deleted.insert(old) }
            }
        } catch { rec.problem("address failed: \(error)") }
    }

    static func listOperation(
        _ r: isolated Realm, _ rng: inout SeededRandomNumberGenerator, _ rec: WriteRecorder, propagate: Bool
    )
        throws
    {
        let (type, property, elementType) = rng.pick([
            ("Person", "dogs", "Dog"), ("Person", "dogs", "Dog"), ("Dog", "toys", "DogToy"),
            ("DogClub", "members", "Person"),
        ])!
        guard let owner = rng.pick(NotificationModel.live(r, type)) else { return }
        let object = NotificationModel.object(r, owner)!
        let elements = NotificationModel.linked(r, owner, property)
        let candidates = NotificationModel.live(r, elementType)
        let count = elements.count
        do {
            switch rng.int(0...9) {
            case 0, 1, 2:
                guard let element = rng.pick(elements.isEmpty || rng.chance(0.7) ? candidates : elements) else {
                    return
                }
                let index = rng.int(0...count)
                rec.log("insert \(element) into \(owner).\(property) at \(index) of \(count)")
                try object.insert(.object(element.key), into: property, at: index)
                rec.touch(owner, property)
                rec.linkChanged(owner, property, element)
            case 3, 4:
                guard count > 0 else { return }
                let index = rng.int(0...count - 1)
                rec.log("remove \(owner).\(property)[\(index)] (\(elements[index]))")
                try object.remove(from: property, at: index)
                rec.touch(owner, property)
                rec.linkChanged(owner, property, elements[index])
            case 5, 6:
                guard count > 1 else { return }
                let from = rng.int(0...count - 1)
                let to = rng.int(0...count - 1)
                rec.log("move \(owner).\(property) \(from) -> \(to)")
                try object.move(in: property, from: from, to: to)
                if from != to { rec.touch(owner, property) }
            case 7:
                guard count > 0, let element = rng.pick(candidates) else { return }
                let index = rng.int(0...count - 1)
                rec.log("replace \(owner).\(property)[\(index)] (\(elements[index])) with \(element)")
                try object.replace(in: property, at: index, with: .object(element.key))
                if elements[index] != element {
                    rec.touch(owner, property)
                    rec.linkChanged(owner, property, elements[index])
                    rec.linkChanged(owner, property, element)
                }
            case 8:
                // Replace the whole list.
                let new = (0..<rng.int(0...3)).compactMap { _ in rng.pick(candidates) }
                rec.log("set \(owner).\(property) = \(new) (was \(elements))")
                try object.set(property, to: .list(new.map { .object($0.key) }))
                if new != elements {
                    rec.touch(owner, property)
                    for element in elements + new { rec.linkChanged(owner, property, element) }
                }
            default:
                // Out of bounds: fails and changes nothing.
                rec.log("remove \(owner).\(property)[\(count)] (out of bounds)")
                try object.remove(from: property, at: count)
                rec.problem("an out-of-bounds removal succeeded")
            }
        } catch {
            if error.code != .indexOutOfBounds { rec.problem("list operation failed: \(error)") }
            if propagate { throw error }
        }
    }

    /// Operations through the typed API.
    static func typedOperation(_ r: isolated Realm, _ rng: inout SeededRandomNumberGenerator, _ rec: WriteRecorder) {
        switch rng.int(0...2) {
        case 0:
            guard let ref = rng.pick(NotificationModel.live(r, "Person")) else { return }
            let person = r.objects(Person.self).first { $0.objectKey == ref.key }!
            guard person.dogs.count > 1 else { return }
            let i = rng.int(0...person.dogs.count - 1)
            let j = rng.int(0...person.dogs.count - 1)
            rec.log("swap \(ref).dogs \(i) <-> \(j)")
            person.dogs.swapAt(i, j)
            if i != j { rec.touch(ref, "dogs") }
        case 1:
            guard let ref = rng.pick(NotificationModel.live(r, "Dog")) else { return }
            let dog = r.objects(Dog.self).first { $0.objectKey == ref.key }!
            let age = rng.int(0...6)
            rec.log("typed \(ref).age = \(age) (was \(dog.age))")
            if dog.age != age { rec.touch(ref, "age") }
            dog.age = age
        default:
            guard let ref = rng.pick(NotificationModel.live(r, "Dog")) else { return }
            let dog = r.objects(Dog.self).first { $0.objectKey == ref.key }!
            guard !dog.toys.isEmpty else { return }
            let elements = NotificationModel.linked(r, ref, "toys")
            rec.log("typed removeAll \(ref).toys (\(elements))")
            dog.toys.removeAll()
            rec.touch(ref, "toys")
            for toy in elements { rec.linkChanged(ref, "toys", toy) }
        }
    }
}
