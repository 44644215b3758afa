import LiveObjectsStore
import Synchronization

/// A value that is not `Sendable` (an unmanaged or detached object, an array of them), handed
/// from one isolation to another through code that needs a `Sendable` value: a completion
/// handler, a `@Sendable` closure, a stored property of a `Sendable` type.
///
/// The value is sent in (the compiler checks that nothing else keeps it) and taken out once:
///
/// ```swift
/// let dogs = try await realm.read { $0.objects(Dog.self).detached() }
/// let handoff = Handoff(dogs)
/// DispatchQueue.global().async {
///     if let dogs = handoff.take() { print(dogs.count) }
/// }
/// ```
///
/// Sound because the value has one owner at a time: ``take()`` gives it to the first caller
/// and leaves nothing behind.
public final class Handoff<Value>: Sendable {
    private let value: Mutex<Value?>

    /// Holds `value` until it is taken.
    public init(_ value: consuming sending Value) {
        self.value = Mutex(Optional(value))
    }

    /// The value, for the first caller; nil after that.
    public func take() -> sending Value? {
        value.withLock { (value: inout sending Value?) -> sending Value? in
            let taken = value.take()
            return taken
        }
    }
}

/// A frozen object given as input (`realm.create(Dog.self, value: frozenRex)`, or as a link in
/// a dictionary): it is copied as an unmanaged object, with what it links to, then added.
protocol FrozenObjectInput: Sendable {
    /// An unmanaged copy of the object at its frozen version.
    func unmanagedCopy() -> Object
}
