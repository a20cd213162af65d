// SPDX-License-Identifier: GPL-2.0-or-later
import Concurrency

/// Stops one supervision run and lets the caller wait until it has wound down.
struct StopSignal: Sendable {
    let requested = OneShotEvent()
    let finished = OneShotEvent()

    /// Stops the run and waits until it has ended.
    func stopAndWait() async {
        requested.fire()
        await finished.wait()
    }
}
