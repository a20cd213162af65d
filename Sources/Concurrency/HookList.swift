// SPDX-License-Identifier: GPL-2.0-or-later
import Synchronization

/// Work to run before something happens (an agent session stopped before Unpair), registered by
/// parts made after the one that runs them.
public final class HookList: Sendable {
    private let hooks = Mutex<[@Sendable () async -> Void]>([])

    public init() {}

    public func add(_ hook: @escaping @Sendable () async -> Void) {
        hooks.withLock { $0.append(hook) }
    }

    public func run() async {
        for hook in hooks.withLock({ $0 }) { await hook() }
    }
}
