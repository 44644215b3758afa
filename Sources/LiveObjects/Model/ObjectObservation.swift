import LiveObjectsStore
import Observation
import Synchronization

/// Model objects take part in the Observation framework: reading a `@Persisted` property inside
/// `withObservationTracking` (and so in a SwiftUI view's body) tracks it, and the tracking is
/// told when the property really changes.
///
/// - A managed object reports a property after a commit that changed its value, whichever
///   object instance (or dynamic API call) made the write: all instances of one object share
///   their tracking. Writing a property with the value it already has, or changing it and back
///   in one write, reports nothing. Appending to, removing from, moving or replacing elements
///   of a `List` counts as a change of the list property; a change of the links that make up a
///   `LinkingObjects` counts as a change of that property. Deleting the object reports every
///   property that was tracked. Observers run after the commit, inside the realm's
///   isolation, and see the new values.
/// - An unmanaged object reports a property when it is set (unless it is set to the same plain
///   value).
/// - Tracking lasts as long as an instance of the object is alive: keep the instance you
///   observe (as a SwiftUI view keeps its model).
///
/// A read outside `withObservationTracking` allocates nothing: it costs one call of the
/// framework's `access` more than without observation (see ``ObservationProbe``).
extension Object: Observable {}

/// The observation registrar of a model object, made on the first property read of an object
/// instance that happens inside `withObservationTracking`.
///
/// All instances of one managed object share one registrar, kept by row in the realm's
/// ``ObservationRegistry``, so that a write through any instance, or through the dynamic
/// API, reaches the trackers of every instance; an unmanaged object has its own.
///
/// Why a registrar per object, cached on the instance, made only for tracked reads: reading a
/// property must stay cheap, and most reads are not tracked (queries, scans, lookups that
/// make a fresh instance per row). A registrar costs three allocations, and a registry of
/// them a hash lookup, so neither is paid unless a tracker is listening: an instance without
/// a registrar asks the ``ObservationProbe`` (one call and two loads), and only a read inside
/// `withObservationTracking` makes or finds the row's registrar. After that, the instance's
/// reads cost one load, one nil check and the registrar's own `access` call. Registrars no
/// instance refers to are dropped by the store.
@usableFromInline
final class ObjectObservation {
    @usableFromInline let registrar = ObservationRegistrar()
    /// The row the registrar belongs to, for a managed object.
    let row: ObservedRow?

    init(row: ObservedRow?) {
        self.row = row
    }
}

/// The identity of a managed object in its store, for the registry of registrars.
struct ObservedRow: Hashable {
    let table: Int32
    let row: Int32
    let generation: UInt32

    func hash(into hasher: inout Hasher) {
        // One word: row and generation tell objects apart; the table rarely matters.
        hasher.combine(UInt64(UInt32(bitPattern: row)) << 32 | UInt64(generation))
    }
}

/// Tells whether the current read happens inside `withObservationTracking`, without a
/// registrar for the object read.
///
/// The Observation framework offers no way to ask. The probe reads a key path of its own on a
/// registrar of its own: outside tracking that does nothing; inside, the framework records the
/// key path in a hashed set, and hashing it hashes the key path's subscript argument, a
/// ``ProbeToken`` that counts its hashes. A count that moved during the read means a tracker
/// is listening. Another thread's tracker hashing the token at the same moment can only make
/// the answer a false "yes", which costs a registrar that is never told anything.
///
/// The probe's registrar is never changed, so the trackers it collects never fire from it;
/// each is dropped when its tracking fires or is cancelled (a tracking that never does keeps
/// one small entry, as it does in every registrar it read).
///
/// This relies on the framework hashing the key paths a tracked read records, which is how it
/// keeps them (in a set); were that to change, tracked reads would go unnoticed and the
/// observation tests would fail.
///
/// @unchecked Sendable: every stored property is immutable after `init`; the count is atomic.
final class ObservationProbe: @unchecked Sendable {
    static let shared = ObservationProbe()

    private let registrar = ObservationRegistrar()
    private let counter = ProbeCounter()
    private let keyPath: KeyPath<ProbeSubject, Int>

    private init() {
        keyPath = \ProbeSubject.[probe: ProbeToken(counter: counter)]
    }

    /// Whether a tracker records reads on this thread now.
    var isTracking: Bool {
        let before = counter.hashes.load(ordering: .relaxed)
        registrar.access(ProbeSubject(), keyPath: keyPath)
        return counter.hashes.load(ordering: .relaxed) != before
    }
}

final class ProbeCounter: Sendable {
    let hashes = Atomic<Int>(0)
}

/// The subscript argument of the probe's key path: equal to itself, counting its hashes.
struct ProbeToken: Hashable, Sendable {
    let counter: ProbeCounter

    static func == (lhs: ProbeToken, rhs: ProbeToken) -> Bool { lhs.counter === rhs.counter }

    func hash(into hasher: inout Hasher) {
        counter.hashes.add(1, ordering: .relaxed)
        hasher.combine(ObjectIdentifier(counter))
    }
}

/// What the probe's key path is rooted at.
struct ProbeSubject: Observable {
    subscript(probe token: ProbeToken) -> Int { 0 }
}

extension Object {
    /// Whether a read of the instance, which has no registrar yet, is tracked. Never for
    /// objects of stores that never change (frozen snapshots, key-path probes).
    @usableFromInline
    final var _isTracked: Bool {
        @inline(never) get {
            if let handle = _handle, !handle.store.isLive { return false }
            return ObservationProbe.shared.isTracking
        }
    }

    /// Makes (or, for a managed object, finds) the instance's registrar for a tracked read,
    /// and registers the read with it.
    @usableFromInline @inline(never)
    final func _beginObservation(field: Int) {
        let observation: ObjectObservation
        if let handle = _handle {
            observation = handle.store.observationRegistry.observation(of: handle)
        } else {
            observation = ObjectObservation(row: nil)
        }
        _observation = observation
        observation.registrar.access(self, keyPath: Object.observedKeyPath(field: field))
    }

    /// Registers a tracked read of the `@Persisted` property at this offset.
    @usableFromInline
    final func _access(_ observation: ObjectObservation, field: Int) {
        observation.registrar.access(self, keyPath: Object.observedKeyPath(field: field))
    }

    /// Whether setting an unmanaged property from `old` to `new` is reported: not when both
    /// are the same plain value.
    @usableFromInline
    final func _reportsChange<Value: _Persistable>(from old: Value, to new: Value) -> Bool {
        guard case .value(let oldValue) = old._encode().input, case .value(let newValue) = new._encode().input
        else { return true }
        return oldValue != newValue
    }

    /// Announces a change of the unmanaged property at this offset.
    @usableFromInline
    final func _willSet(_ observation: ObjectObservation, field: Int) {
        observation.registrar.willSet(self, keyPath: Object.observedKeyPath(field: field))
    }

    /// Reports a change of the unmanaged property at this offset.
    @usableFromInline
    final func _didSet(_ observation: ObjectObservation, field: Int) {
        observation.registrar.didSet(self, keyPath: Object.observedKeyPath(field: field))
    }

    /// The key path that observation tracks the `@Persisted` property at this offset by: the
    /// same for every instance (and every class: a registrar belongs to one object, so only
    /// the properties of one object need telling apart).
    ///
    /// Not the wrapper's own key path: a property access that kept it would fetch the key
    /// path object (a retain and a release) on every read, tracked or not.
    static func observedKeyPath(field: Int) -> KeyPath<Object, Int> {
        // Fields of ordinary classes lie in the first few hundred bytes: their key paths are
        // made once, together, and read without a lock on every tracked access.
        if field >= 0 && field < nearObservedKeyPaths.count { return nearObservedKeyPaths[field] }
        return observedKeyPaths.withLock { cache in
            if let keyPath = cache[field] { return keyPath }
            let keyPath = \Object.[observedField: field]
            cache[field] = keyPath
            return keyPath
        }
    }

    // nonisolated(unsafe): made once and never changed; key paths are immutable objects.
    nonisolated(unsafe) private static let nearObservedKeyPaths: [KeyPath<Object, Int>] = (0..<512).map {
        \Object.[observedField: $0]
    }
    private static let observedKeyPaths = Locked<[Int: KeyPath<Object, Int>]>([:])

    /// What ``observedKeyPath(field:)`` names.
    subscript(observedField field: Int) -> Int { field }
}
