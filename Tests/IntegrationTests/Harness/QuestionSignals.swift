// SPDX-License-Identifier: GPL-2.0-or-later
import DBusKit
import GlassdAPI

/// Manager1's signals about questions, from now on.
func questionSignals(_ bus: BusConnection) async throws -> AsyncStream<BusSignal> {
    try await bus.signals(SignalMatch(path: GlassdBus.managerPath, interface: GlassdBus.managerInterface))
}

/// The signals of one question until it ends (Answered or QueryFailed), in order.
func untilEnd(_ signals: AsyncStream<BusSignal>, timeout: Duration = .seconds(60)) async throws -> [BusSignal] {
    try await within(timeout, failure: { "the question did not end within \(timeout)" }) {
        var seen: [BusSignal] = []
        for await signal in signals {
            seen.append(signal)
            if signal.member == GlassdBus.Signal.answered || signal.member == GlassdBus.Signal.queryFailed { return seen }
        }
        throw TestFailure("signals ended: \(seen.map(\.member))")
    }
}
