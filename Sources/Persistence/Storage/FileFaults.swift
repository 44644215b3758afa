import LiveObjects
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A seam over the file calls that saving and journaling make, so that tests can make the
/// *n*-th call of one kind fail (with `ENOSPC` or `EIO`, say) and check that nothing that was
/// acknowledged is lost.
///
/// Every call that changes a file goes through ``FileIO``, which asks ``check(_:_:)`` first.
/// With no plan installed that is one relaxed atomic load. A plan applies only to paths under
/// its directory, so tests running side by side in other directories are not touched.
package enum FileFaults {
    /// The kinds of file call counted.
    package enum Call: String, CaseIterable, Sendable {
        /// Opening a file for writing (a temporary file, the journal, the lock file), or a
        /// directory to sync it.
        case open
        /// Writing bytes.
        case write
        /// Syncing a file to the disk.
        case sync
        /// Renaming the temporary file over its target.
        case rename
        /// Syncing a directory after a rename.
        case syncDirectory
        /// Cutting a file to a length (the journal).
        case truncate
        /// Removing a file.
        case unlink
    }

    /// A plan: count the calls under `directory`, and fail the `failing.n`-th call of kind
    /// `failing.call` (counted from 1) with the error number `failing.code`, and the calls of
    /// that kind after it up to `times` calls in all.
    package struct Plan: Sendable {
        package var directory: String
        package var failing: (call: Call, n: Int, code: Int32)?
        /// How many calls in a row fail: 1 for a passing fault, `Int.max` for a disk that
        /// stays full, a few for one that is full for a while.
        package var times: Int
        package var counts: [Call: Int] = [:]

        package init(directory: String, failing: (call: Call, n: Int, code: Int32)? = nil, times: Int = 1) {
            self.directory = directory.hasSuffix("/") ? directory : directory + "/"
            self.failing = failing
            self.times = times
        }
    }

    // `Locked`, not `Mutex`: saves on several threads contend here, and the thread sanitizer
    // does not follow `Mutex`'s futex path on Linux (it reported every such call as a race).
    private static let plans = Locked<[Int: Plan]>([:])
    private static let active = Atomic<Int>(0)
    private static let nextID = Atomic<Int>(0)

    /// Installs a plan; returns the handle ``remove(_:)`` takes.
    package static func install(_ plan: Plan) -> Int {
        let id = nextID.wrappingAdd(1, ordering: .relaxed).newValue
        plans.withLock { $0[id] = plan }
        active.wrappingAdd(1, ordering: .releasing)
        return id
    }

    /// Removes a plan; returns how many calls of each kind it counted.
    @discardableResult
    package static func remove(_ id: Int) -> [Call: Int] {
        guard let plan = plans.withLock({ $0.removeValue(forKey: id) }) else { return [:] }
        active.wrappingSubtract(1, ordering: .releasing)
        return plan.counts
    }

    /// Counts a call on `path`; returns the error number it must fail with, if a plan says so.
    @inline(__always)
    static func check(_ call: Call, _ path: String) -> Int32? {
        guard active.load(ordering: .acquiring) > 0 else { return nil }
        return plans.withLock { plans -> Int32? in
            for (id, var plan) in plans where path.hasPrefix(plan.directory) || path + "/" == plan.directory {
                let n = plan.counts[call, default: 0] + 1
                plan.counts[call] = n
                plans[id] = plan
                if let failing = plan.failing, failing.call == call, n >= failing.n, n - failing.n < plan.times {
                    return failing.code
                }
            }
            return nil
        }
    }
}
