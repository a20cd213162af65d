// SPDX-License-Identifier: GPL-2.0-or-later
import Synchronization

/// A boolean set once from any task.
final class Flag: Sendable {
    private let value = Atomic<Bool>(false)
    func set() { value.store(true, ordering: .releasing) }
    var isSet: Bool { value.load(ordering: .acquiring) }
}
