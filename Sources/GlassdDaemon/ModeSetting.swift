// SPDX-License-Identifier: GPL-2.0-or-later
import GlassdCore
import Synchronization

/// The current mode, read by every query and written by the Mode property's setter on the bus
/// thread, which must not wait.
final class ModeSetting: Sendable {
    private let value: Mutex<Mode>

    init(_ mode: Mode) {
        value = Mutex(mode)
    }

    var mode: Mode {
        get { value.withLock { $0 } }
        set { value.withLock { $0 = newValue } }
    }
}
