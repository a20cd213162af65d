// SPDX-License-Identifier: GPL-2.0-or-later
import Concurrency
import DBusKit
import LinkKit
import Synchronization

/// A mirror of org.bluez's objects, kept current from its signals, that tasks can wait on:
/// "until the device is connected", "until its services are resolved". No polling: each change
/// re-checks the waiters.
public final class BlueZState: Sendable {
    public struct Snapshot: Sendable {
        public var objects: BlueZObjects = [:]
        /// Whether org.bluez is on the bus.
        public var present = false
        /// Whether the first look at org.bluez is done (until then, "absent" means "not known yet").
        public var initialized = false
        /// How often a Device1 has appeared at each path: a count that went up means BlueZ made
        /// the object anew (after a removal, from a new advertisement).
        public var appearances: [String: UInt64] = [:]
        /// How often org.bluez has come onto the bus: a count that went up means a bluetoothd
        /// that knows nothing of what was registered with the one before (glassd's agent).
        public var bluezArrivals: UInt64 = 0

        public func properties(_ path: String, _ interface: String) -> [String: DBusValue]? {
            objects[path]?[interface]
        }
    }

    public struct TimedOut: Error {}

    private struct Waiter {
        let check: @Sendable (Snapshot) -> Bool
        let continuation: CheckedContinuation<Void, any Error>
    }

    private struct Inner {
        var snapshot = Snapshot()
        var waiters: [UInt64: Waiter] = [:]
        var cancelled: Set<UInt64> = []
        var nextID: UInt64 = 0
        var valueListeners: [String: PacketInbox] = [:]
    }

    private let inner = Mutex(Inner())
    private let changeTicks = Broadcast<Void>()

    public init() {}

    public var snapshot: Snapshot { inner.withLock { $0.snapshot } }

    // MARK: Updates

    func reset(_ objects: BlueZObjects, present: Bool) {
        update {
            for (path, interfaces) in objects where interfaces[BlueZ.device] != nil && $0.objects[path]?[BlueZ.device] == nil {
                $0.appearances[path, default: 0] += 1
            }
            $0.objects = objects
            if present && !$0.present { $0.bluezArrivals += 1 }
            $0.present = present
            $0.initialized = true
        }
    }

    func interfacesAdded(_ path: String, _ interfaces: [String: [String: DBusValue]]) {
        update { snapshot in
            if interfaces[BlueZ.device] != nil, snapshot.objects[path]?[BlueZ.device] == nil {
                snapshot.appearances[path, default: 0] += 1
            }
            for (name, properties) in interfaces { snapshot.objects[path, default: [:]][name] = properties }
        }
    }

    func interfacesRemoved(_ path: String, _ names: [String]) {
        update { snapshot in
            for name in names { snapshot.objects[path]?.removeValue(forKey: name) }
            if snapshot.objects[path]?.isEmpty == true { snapshot.objects.removeValue(forKey: path) }
        }
    }

    func propertiesChanged(_ path: String, _ interface: String, _ changed: [String: DBusValue], _ invalidated: [String]) {
        if interface == BlueZ.characteristic, let payload = changed["Value"]?.bytes {
            // Notifications go to the link, not into the mirror.
            inner.withLock { $0.valueListeners[path] }?.push(payload)
            if changed.count == 1 { return }
        }
        update { snapshot in
            guard snapshot.objects[path]?[interface] != nil else { return }
            for (key, value) in changed where key != "Value" { snapshot.objects[path]?[interface]?[key] = value.unwrapped }
            for key in invalidated { snapshot.objects[path]?[interface]?.removeValue(forKey: key) }
        }
    }

    private func update(_ change: (inout Snapshot) -> Void) {
        let ready: [Waiter] = inner.withLock { state in
            change(&state.snapshot)
            let snapshot = state.snapshot
            let done = state.waiters.filter { $0.value.check(snapshot) }
            for id in done.keys { state.waiters.removeValue(forKey: id) }
            return Array(done.values)
        }
        for waiter in ready { waiter.continuation.resume() }
        changeTicks.publish(())
    }

    /// Ticks after changes (coalesced: a slow reader sees one tick for many changes).
    public func changes() -> AsyncStream<Void> {
        changeTicks.subscribe(bufferingPolicy: .bufferingNewest(1))
    }

    // MARK: Notifications

    /// Value notifications of the characteristic at `path`, until `stopValues(path)`.
    func values(of path: String) -> PacketInbox {
        let inbox = PacketInbox()
        let old = inner.withLock { state in
            defer { state.valueListeners[path] = inbox }
            return state.valueListeners[path]
        }
        old?.finish()
        return inbox
    }

    func stopValues(_ path: String) {
        inner.withLock { $0.valueListeners.removeValue(forKey: path) }?.finish()
    }

    // MARK: Waiting

    /// Returns once `condition` holds (at once if it already does); throws `TimedOut` after
    /// `timeout`, or CancellationError.
    public func wait(timeout: Duration? = nil, until condition: @escaping @Sendable (Snapshot) -> Bool) async throws {
        try Task.checkCancellation()
        if condition(snapshot) { return }
        guard let timeout else { return try await waitForever(condition) }
        do {
            try await withDeadline(after: timeout, on: ContinuousClock()) { try await self.waitForever(condition) }
        } catch is DeadlinePassed {
            throw TimedOut()
        }
    }

    private func waitForever(_ condition: @escaping @Sendable (Snapshot) -> Bool) async throws {
        let id = inner.withLock { state in
            defer { state.nextID += 1 }
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let outcome: Result<Void, any Error>? = inner.withLock { state in
                    if state.cancelled.remove(id) != nil { return .failure(CancellationError()) }
                    if condition(state.snapshot) { return .success(()) }
                    state.waiters[id] = Waiter(check: condition, continuation: continuation)
                    return nil
                }
                if let outcome { continuation.resume(with: outcome) }
            }
        } onCancel: {
            let waiter = inner.withLock { state in
                let waiter = state.waiters.removeValue(forKey: id)
                if waiter == nil { state.cancelled.insert(id) }
                return waiter
            }
            waiter?.continuation.resume(throwing: CancellationError())
        }
    }
}
