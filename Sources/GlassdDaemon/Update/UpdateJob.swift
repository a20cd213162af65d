// SPDX-License-Identifier: GPL-2.0-or-later
import Concurrency
import DBusKit
import GlassdAPI
import GlassdContract
import Glasses
import Synchronization
import Updates

/// One update on the bus: /org/glassd/jobs/N with org.glassd.Job1. Its phase, bar and error
/// change from the update's progress callbacks (any thread); each change is posted to the bus
/// thread in order, and Finished comes after the final Status.
final class UpdateJob: UpdateProgress {
    let path: String
    private let connection: BusConnection

    private struct State {
        var phase = UpdatePhase.checking
        var bar: ProgressBar
        var error = ""
        var cancelRequested = false
        var stop: (@Sendable () -> Void)?
    }

    private let state: Mutex<State>
    /// Fires once the job has ended (Finished sent).
    let ended = OneShotEvent()

    init(number: UInt32, bar: ProgressBar, connection: BusConnection) {
        path = GlassdBus.jobsPath + "/\(number)"
        self.connection = connection
        state = Mutex(State(bar: bar))
    }

    var phase: UpdatePhase { state.withLock { $0.phase } }
    var percentage: UInt32 { state.withLock { $0.bar.percentage } }

    var spec: InterfaceSpec {
        GlassdBus.Job1.spec(
            methods: [
                GlassdBus.Job1.Cancel.method { [self] _ in
                    do throws(UpdateRefusal) {
                        try cancel()
                    } catch {
                        throw error.busError
                    }
                    return []
                }
            ],
            properties: [
                GlassdBus.Job1.PropertySpec.status(UpdatePhase.checking.rawValue),
                GlassdBus.Job1.PropertySpec.percentage(0),
                GlassdBus.Job1.PropertySpec.error(""),
            ])
    }

    /// What Cancel stops (the update's task); set before the job is on the bus.
    func onCancel(_ stop: @escaping @Sendable () -> Void) {
        state.withLock { $0.stop = stop }
    }

    /// Cancel: refused with the reason in phases where stopping would leave the glasses unusable.
    func cancel() throws(UpdateRefusal) {
        let stop = try state.withLock { s throws(UpdateRefusal) -> (@Sendable () -> Void)? in
            if let refusal = s.phase.cancelRefusal { throw UpdateRefusal(.notCancellable, refusal) }
            guard !s.cancelRequested else { return nil }
            s.cancelRequested = true
            return s.stop
        }
        stop?()
    }

    /// Enters `phase`. Throws CancellationError when a Cancel came earlier and `phase` may not be
    /// stopped (so the update stops before it, not in it).
    func enter(_ phase: UpdatePhase) throws {
        let percent = try state.withLock { s throws -> UInt32 in
            if s.cancelRequested && phase.cancelRefusal != nil { throw CancellationError() }
            s.phase = phase
            return s.bar.advance(phase, 0)
        }
        publish(status: phase, percentage: percent)
    }

    /// `fraction` of the current phase done (`phase` may name a sub-phase the progress reports).
    func progress(_ phase: UpdatePhase, _ fraction: Double) {
        let (changed, shown, percent) = state.withLock { s -> (Bool, UpdatePhase, UInt32) in
            let before = (s.phase, s.bar.percentage)
            // The FPGA's sub-phases (erasing, writing, verifying) come from its progress.
            if phase != s.phase && phase.cancelRefusal == nil && s.phase.cancelRefusal == nil { s.phase = phase }
            let now = s.bar.advance(phase, fraction)
            return (before.0 != s.phase || before.1 != now, s.phase, now)
        }
        if changed { publish(status: shown, percentage: percent) }
    }

    /// Ends the job: Status done, failed or cancelled, then Finished(success, message).
    func finish(_ result: UpdatePhase, message: String) {
        let percent = state.withLock { s -> UInt32 in
            s.phase = result
            if result != .done { s.error = message }
            return result == .done ? s.bar.advance(.done, 1) : s.bar.percentage
        }
        let path = self.path
        connection.post { connection in
            if result != .done {
                try? connection.setProperty(GlassdBus.Job.error, to: .string(message), interface: GlassdBus.jobInterface, at: path)
            }
            try? connection.setProperty(GlassdBus.Job.percentage, to: .uint32(percent), interface: GlassdBus.jobInterface, at: path)
            try? connection.setProperty(GlassdBus.Job.status, to: .string(result.rawValue), interface: GlassdBus.jobInterface, at: path)
            try? connection.emit(
                GlassdBus.Job.finished, interface: GlassdBus.jobInterface, at: path,
                GlassdBus.Job1.Finished(success: result == .done, message: message).values)
        }
        ended.fire()
    }

    private func publish(status: UpdatePhase, percentage: UInt32) {
        let path = self.path
        connection.post { connection in
            try? connection.setProperty(GlassdBus.Job.status, to: .string(status.rawValue), interface: GlassdBus.jobInterface, at: path)
            try? connection.setProperty(GlassdBus.Job.percentage, to: .uint32(percentage), interface: GlassdBus.jobInterface, at: path)
        }
    }
}
