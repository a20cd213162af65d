// SPDX-License-Identifier: GPL-2.0-or-later
import DBusKit
import GlassdAPI

/// Subscribes to update jobs' Finished signals: subscribe before starting (or provoking) the job,
/// then wait for it with `finished(_:job:timeout:)`.
func jobFinishedSignals(_ bus: BusConnection) async throws -> AsyncStream<BusSignal> {
    try await bus.signals(SignalMatch(sender: GlassdBus.name, interface: GlassdBus.jobInterface, member: GlassdBus.Job.finished))
}

/// The first Finished(success, message) of job `path` (of any job when nil).
func finished(
    _ signals: AsyncStream<BusSignal>, job path: String? = nil, timeout: Duration = .seconds(180)
) async throws -> (success: Bool, message: String) {
    try await within(timeout, failure: { "no update job finished within \(timeout)" }) {
        for await signal in signals where path == nil || signal.path == path {
            guard case .bool(let success)? = signal.arguments.first else { continue }
            return (success, signal.arguments.dropFirst().first?.string ?? "")
        }
        throw TestFailure("signals ended")
    }
}

/// The signals of the next question `ask` sets off, until it ends (Answered or QueryFailed).
func nextQuestion(
    _ bus: BusConnection, timeout: Duration = .seconds(60), _ ask: () async throws -> Void
) async throws -> [BusSignal] {
    let signals = try await bus.signals(SignalMatch(path: GlassdBus.managerPath, interface: GlassdBus.managerInterface))
    try await ask()
    return try await within(timeout, failure: { "the question did not end within \(timeout)" }) {
        var seen: [BusSignal] = []
        for await signal in signals {
            seen.append(signal)
            if signal.member == GlassdBus.Signal.answered || signal.member == GlassdBus.Signal.queryFailed { return seen }
        }
        throw TestFailure("signals ended: \(seen.map(\.member))")
    }
}
