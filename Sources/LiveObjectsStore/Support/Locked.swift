import Foundation

/// A value behind a pthread lock (`NSLock`).
///
/// Used where threads contend, instead of `Synchronization.Mutex`: under contention `Mutex`
/// takes a futex path on Linux that the thread sanitizer does not follow, so it reports false
/// races on the values it guards.
@usableFromInline
package final class Locked<Value>: @unchecked Sendable {
    // @unchecked: `value` is only touched while `lock` is held.
    @usableFromInline var value: Value
    @usableFromInline let lock = NSLock()

    @inlinable package init(_ value: Value) {
        self.value = value
    }

    /// Runs `body` with the value, one caller at a time.
    @inlinable package func withLock<T, E: Error>(_ body: (inout Value) throws(E) -> T) throws(E) -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
