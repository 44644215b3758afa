import Foundation
import LiveObjects

// Where LiveObjects' bytes per object go, measured by taking the benchmark's model apart: each
// variant below is loaded alone in a child process (as the memory workload loads the full
// model), and the difference between two variants is what the part they differ by costs.
//
//     liveobjects-bench --memory-breakdown [--n N] [--runs R]

final class KeyOnlyPerson: Object {
    @Persisted(primaryKey: true) var id = 0
}

final class KeyOnlyDog: Object {
    @Persisted(primaryKey: true) var id = 0
}

final class PlainPerson: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var name = ""
    @Persisted var age = 0
}

final class PlainDog: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var name = ""
    @Persisted var age = 0
}

final class IndexedDog: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted(indexed: true) var name = ""
    @Persisted var age = 0
}

final class LinkedPerson: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var name = ""
    @Persisted var age = 0
    @Persisted(originProperty: "owner") var dogs: LinkingObjects<LinkedDog>
}

final class LinkedDog: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var name = ""
    @Persisted var age = 0
    @Persisted var owner: LinkedPerson?
}

enum MemoryBreakdown {
    /// The variants, from the smallest model to the benchmark's own.
    static let variants: [(name: String, description: String)] = [
        ("keys", "Person {id}, Dog {id}: primary keys only"),
        ("plain", "+ name and age, no index, no link"),
        ("indexed", "plain + the index on Dog.name"),
        ("linked", "plain + Dog.owner and Person.dogs (LinkingObjects)"),
        ("linked-looked-up", "linked, each owner looked up by key instead of kept through the write"),
        ("liveobjects", "the benchmark's model: indexed + linked"),
    ]

    /// Loads one variant (in a child process) as `insert_all` does, keeping the realm.
    static func load(_ variant: String, _ data: Dataset) async throws -> Realm? {
        let types: [Object.Type]
        switch variant {
        case "keys": types = [KeyOnlyPerson.self, KeyOnlyDog.self]
        case "plain": types = [PlainPerson.self, PlainDog.self]
        case "indexed": types = [PlainPerson.self, IndexedDog.self]
        case "linked", "linked-looked-up": types = [LinkedPerson.self, LinkedDog.self]
        default: return nil
        }
        let realm = try await Realm.open(.init(identifier: "breakdown-\(variant)", objectTypes: types))
        try await realm.write { realm in
            switch variant {
            case "keys":
                for i in 0..<data.personCount {
                    let p = KeyOnlyPerson()
                    p.id = i + 1
                    try realm.add(p)
                }
                for i in 0..<data.dogCount {
                    let d = KeyOnlyDog()
                    d.id = i + 1
                    try realm.add(d)
                }
            case "linked":
                var persons: [LinkedPerson] = []
                for i in 0..<data.personCount {
                    let p = LinkedPerson()
                    (p.id, p.name, p.age) = (i + 1, data.personNames[i], data.personAges[i])
                    try realm.add(p)
                    persons.append(p)
                }
                for i in 0..<data.dogCount {
                    let d = LinkedDog()
                    (d.id, d.name, d.age) = (i + 1, data.dogNames[i], data.dogAges[i])
                    d.owner = persons[data.dogOwners[i] - 1]
                    try realm.add(d)
                }
            case "linked-looked-up":
                for i in 0..<data.personCount {
                    let p = LinkedPerson()
                    (p.id, p.name, p.age) = (i + 1, data.personNames[i], data.personAges[i])
                    try realm.add(p)
                }
                for i in 0..<data.dogCount {
                    let d = LinkedDog()
                    (d.id, d.name, d.age) = (i + 1, data.dogNames[i], data.dogAges[i])
                    d.owner = realm.object(ofType: LinkedPerson.self, forPrimaryKey: data.dogOwners[i])
                    try realm.add(d)
                }
            default:
                for i in 0..<data.personCount {
                    let p = PlainPerson()
                    (p.id, p.name, p.age) = (i + 1, data.personNames[i], data.personAges[i])
                    try realm.add(p)
                }
                for i in 0..<data.dogCount {
                    if variant == "indexed" {
                        let d = IndexedDog()
                        (d.id, d.name, d.age) = (i + 1, data.dogNames[i], data.dogAges[i])
                        try realm.add(d)
                    } else {
                        let d = PlainDog()
                        (d.id, d.name, d.age) = (i + 1, data.dogNames[i], data.dogAges[i])
                        try realm.add(d)
                    }
                }
            }
        }
        return realm
    }

    /// Measures every variant (median of `runs` children each) and prints a table: peak and
    /// resident bytes per object above the data set alone, and the differences.
    static func run(n: Int, runs: Int) throws {
        let objects = Double(n + max(1, n / 10))
        var peak: [String: Double] = [:]
        var resident: [String: Double] = [:]
        var baselinePeaks: [Double] = []
        var baselineResidents: [Double] = []
        var peaks: [String: [Double]] = [:]
        var residents: [String: [Double]] = [:]
        for _ in 0..<runs {
            let baseline = try MemoryProbe.spawn("baseline", n: n)
            baselinePeaks.append(baseline.peak)
            baselineResidents.append(baseline.resident)
            for (variant, _) in variants {
                let report = try MemoryProbe.spawn(variant, n: n)
                peaks[variant, default: []].append(report.peak)
                residents[variant, default: []].append(report.resident)
            }
        }
        let basePeak = percentile(baselinePeaks, 0.5)
        let baseResident = percentile(baselineResidents, 0.5)
        for (variant, _) in variants {
            peak[variant] = (percentile(peaks[variant]!, 0.5) - basePeak) / objects
            resident[variant] = (percentile(residents[variant]!, 0.5) - baseResident) / objects
        }
        print("N = \(n) dogs and \(n / 10) persons; median of \(runs) children per variant; bytes per object")
        print("| variant | model | peak | resident |")
        print("|---|---|---:|---:|")
        for (variant, description) in variants {
            print(
                "| \(variant) | \(description) | \(String(format: "%.1f", peak[variant]!)) | "
                    + "\(String(format: "%.1f", resident[variant]!)) |")
        }
        func diff(_ a: String, _ b: String) -> String {
            String(format: "%.1f / %.1f", peak[a]! - peak[b]!, resident[a]! - resident[b]!)
        }
        print("")
        print("| part | peak / resident |")
        print("|---|---:|")
        print(
            "| primary keys, slots, object table (keys) | \(String(format: "%.1f / %.1f", peak["keys"]!, resident["keys"]!)) |"
        )
        print("| name and age columns (plain - keys) | \(diff("plain", "keys")) |")
        print("| index on Dog.name (indexed - plain) | \(diff("indexed", "plain")) |")
        print("| owner link and backlinks (linked - plain) | \(diff("linked", "plain")) |")
        // The benchmark keeps its 100,000 managed Person objects through the write (to link
        // the dogs to them), as an app that makes objects before adding them does.
        print(
            "| of which the link column and backlinks (linked-looked-up - plain) | "
                + "\(diff("linked-looked-up", "plain")) |")
        print(
            "| of which the write's managed Person objects (linked - linked-looked-up) | "
                + "\(diff("linked", "linked-looked-up")) |")
        print(
            "| all together (liveobjects) | \(String(format: "%.1f / %.1f", peak["liveobjects"]!, resident["liveobjects"]!)) |"
        )
    }
}
