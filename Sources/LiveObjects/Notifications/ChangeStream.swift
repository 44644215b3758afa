import Foundation
import LiveObjectsStore
import Synchronization

/// The unbounded `AsyncStream` behind every change subscription, with a hand-off lock between
/// the realm that yields and the task that iterates.
///
/// Why the lock: an element that waits in the stream's buffer reaches its consumer through the
/// stream's internal lock, which on Linux is a futex the thread sanitizer does not follow, so
/// the sanitizer would report the consumer's reads of the element's storage (a frozen
/// snapshot, strings, arrays) as races with the realm's writes that made it. Passing through a
/// pthread lock on both sides (one uncontended lock and unlock each, per element) makes the
/// ordering visible; it changes nothing else.
struct ChangeStream<Element: Sendable>: Sendable {
    let stream: AsyncStream<Element>
    let continuation: Continuation
    let handOff: HandOff
    /// The version of the last element yielded with one (``Continuation/yield(_:version:)``).
    let yielded: YieldedVersion

    init() {
        let (stream, continuation) = AsyncStream<Element>.makeStream(bufferingPolicy: .unbounded)
        let handOff = HandOff()
        let yielded = YieldedVersion()
        self.stream = stream
        self.handOff = handOff
        self.yielded = yielded
        self.continuation = Continuation(base: continuation, handOff: handOff, yielded: yielded)
    }

    /// The producing side, used by the realm's subscriptions.
    struct Continuation: Sendable {
        let base: AsyncStream<Element>.Continuation
        let handOff: HandOff
        let yielded: YieldedVersion

        func yield(_ element: sending Element) {
            handOff.pass()
            base.yield(element)
        }

        /// Yields an element made at a version of the realm, and records the version first.
        func yield(_ element: sending Element, version: UInt64) {
            yielded.value.store(version, ordering: .releasing)
            yield(element)
        }

        func finish() { base.finish() }

        /// Runs `body` once when the consumer stops iterating or the stream finishes.
        func onTermination(_ body: @escaping @Sendable () -> Void) {
            base.onTermination = { _ in body() }
        }
    }
}

/// The version of the last element a subscription yielded: read by a consumer that must know
/// whether an element of a commit it has seen return is still to come.
final class YieldedVersion: Sendable {
    let value = Atomic<UInt64>(0)
}

/// A lock passed through by the producer before each element and by the consumer after it.
final class HandOff: Sendable {
    private let lock = NSLock()

    func pass() {
        lock.lock()
        lock.unlock()
    }
}

/// The iterator of a change subscription (``CollectionChanges``, ``ObjectChanges``,
/// ``RealmChanges``): an `AsyncStream` iterator.
public struct ChangeIterator<Element: Sendable>: AsyncIteratorProtocol {
    public typealias Failure = Never

    var base: AsyncStream<Element>.Iterator
    let handOff: HandOff

    init(_ stream: ChangeStream<Element>) {
        self.base = stream.stream.makeAsyncIterator()
        self.handOff = stream.handOff
    }

    /// The next change, or nil once the subscription has ended.
    public mutating func next() async -> Element? {
        let element = await base.next()
        handOff.pass()
        return element
    }

    /// The next change, or nil once the subscription has ended.
    public mutating func next(isolation actor: isolated (any Actor)?) async -> Element? {
        let element = await base.next(isolation: actor)
        handOff.pass()
        return element
    }
}
