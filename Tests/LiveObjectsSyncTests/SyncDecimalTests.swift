import Foundation
import LiveObjects
import LiveObjectsSync
import LiveObjectsTestSupport
import Testing

/// A price list whose id is an `ObjectID` and whose prices are decimals.
final class PriceList: Object, SyncableObject {
    @Persisted(primaryKey: true) var id = ObjectID()
    @Persisted var serverID: String?
    @Persisted var price = Decimal()
    @Persisted var discount: Decimal?
    @Persisted var history: List<Decimal>
}

@Suite("Sync engine: decimals and object ids")
struct SyncDecimalTests {
    func openRealm(_ name: String) async throws -> Realm {
        var configuration = Realm.Configuration(identifier: "\(name)-\(UUID())", objectTypes: [PriceList.self])
        configuration.keepsHistory = true
        return try await Realm.open(configuration)
    }

    /// Exact decimals (more digits than a Double keeps) and an ObjectID primary key travel from
    /// one device to another unchanged, and an edit comes back.
    @Test func decimalsAndObjectIDsTravelExactly() async throws {
        let server = FakeServer()
        let phone = try await openRealm("phone")
        let tablet = try await openRealm("tablet")
        let options = SyncEngine.Configuration(maxAttempts: 2, sleep: { _ in })
        let phoneEngine = try await SyncEngine(
            realm: phone, transport: server, types: [PriceList.self], configuration: options)
        let tabletEngine = try await SyncEngine(
            realm: tablet, transport: server, types: [PriceList.self], configuration: options)
        let id = ObjectID()
        let exact = Decimal(string: "1234567890.123456789012345678901", locale: Locale(identifier: "en_US_POSIX"))!
        try await phone.write { realm in
            _ = try realm.create(
                PriceList.self,
                value: ["id": id, "price": exact, "history": [Decimal(1), Decimal(string: "0.1")!]])
        }
        let pushed = try await phoneEngine.sync()
        #expect(pushed.pushed == 1 && pushed.failed.isEmpty && pushed.rejections.isEmpty, "\(pushed)")
        #expect(try await tabletEngine.sync().pulled == 1)
        let pulled = try await tablet.read { realm in
            realm.object(ofType: PriceList.self, forPrimaryKey: id).map { ($0.price, $0.discount, Array($0.history)) }
        }
        #expect(pulled?.0 == exact)
        #expect(pulled?.1 == nil)
        #expect(pulled?.2 == [Decimal(1), Decimal(string: "0.1")!])

        try await tablet.write { realm in
            realm.object(ofType: PriceList.self, forPrimaryKey: id)!.discount = Decimal(string: "-0.05")
        }
        _ = try await tabletEngine.sync()
        _ = try await phoneEngine.sync()
        #expect(
            try await phone.read { $0.object(ofType: PriceList.self, forPrimaryKey: id)?.discount }
                == Decimal(string: "-0.05"))
    }
}
