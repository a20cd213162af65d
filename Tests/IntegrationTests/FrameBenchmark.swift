// SPDX-License-Identifier: GPL-2.0-or-later
import DBusKit
import Foundation
import Frame
import GlassdAPI
import Testing

/// The measurements of Scripts/bench-frame (numbers, not a test: it runs only with
/// GLASSD_BENCH_FRAME=1). glassd and one virtual Frame (no link timing model: the fake BlueZ's
/// own speed): Pair to ready with glassd's app uploaded, a power cycle back to ready without an
/// upload, and questions from a tap to their end. Each result is one line `bench-frame: {json}`.
@Suite(
    "Frame benchmark", .serialized, .timeLimit(.minutes(10)),
    .enabled(if: ProcessInfo.processInfo.environment["GLASSD_BENCH_FRAME"] == "1"))
struct FrameBenchmark {
    private static let frame = 3
    private static let questions = Int(ProcessInfo.processInfo.environment["GLASSD_BENCH_QUESTIONS"] ?? "") ?? 10

    private static func emit(_ object: [String: Any]) {
        guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]) else { return }
        print("bench-frame: " + String(decoding: data, as: UTF8.self))
    }

    private static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    /// Runs `action`, then waits until the device's State is ready; returns how long the session
    /// took from its handshake to ready (the link's own part, discovery and connecting, left out).
    private static func bringUp(_ bus: BusConnection, after action: () async throws -> Void) async throws -> Double {
        let changes = try await bus.signals(
            SignalMatch(
                path: GlassdBus.devicePath(address: BLEWorld.adapterAddress(frame)), interface: "org.freedesktop.DBus.Properties",
                member: "PropertiesChanged"))
        try await action()
        let clock = ContinuousClock()
        return try await within(.seconds(120), failure: { "the Frame did not become ready" }) {
            var handshake: ContinuousClock.Instant?
            for await signal in changes {
                switch signal.arguments.dropFirst().first?.stringKeyed?[GlassdBus.DeviceProperty.state]?.string {
                case "handshake": handshake = clock.now
                case "ready" where handshake != nil: return seconds(handshake!.duration(to: clock.now))
                default: break
                }
            }
            throw TestFailure("signals ended")
        }
    }

    @Test("bring-up with and without the app's upload; questions from a tap to their end")
    func bringUpAndQuestions() async throws {
        try await BLEWorld.with { ble in
            try await ble.withFrameSession(Self.frame) { bus, vf in
                let clock = ContinuousClock()
                let first = try await Self.bringUp(bus) {
                    let pair = try await ble.world.glassctl(["pair", BLEWorld.adapterAddress(Self.frame)])
                    guard pair.ok else { throw TestFailure("pair failed: \(pair.stderr)") }
                }
                let afterUpload = try await vf.stats()
                let appBytes = FrameApp.bundled.files.reduce(0) { $0 + FrameApp.bundled.uploaded($1).count }
                try await vf.call("PowerOff")
                let again = try await Self.bringUp(bus) { try await vf.call("PowerOn") }
                let afterReconnect = try await vf.stats()
                Self.emit([
                    "what": "bring-up", "first_s": first, "reconnect_s": again, "ratio": first / max(again, 0.001),
                    "app_bytes": appBytes, "first_chunks": afterUpload["chunks", default: 0],
                    "reconnect_chunks": afterReconnect["chunks", default: 0] - afterUpload["chunks", default: 0],
                ])

                try await vf.call("FeedAudio", [.string(try SpeechFixture.speech(in: ble.world.directory))])
                try await ble.world.setTranscript("what is the tallest mountain")
                var times: [Double] = []
                for _ in 0..<Self.questions {
                    let signals = try await bus.signals(SignalMatch(path: GlassdBus.managerPath, interface: GlassdBus.managerInterface))
                    let start = clock.now
                    try await vf.call("Tap")
                    try await within(.seconds(60), failure: { "a question did not end" }) {
                        for await signal in signals
                        where signal.member == GlassdBus.Signal.answered || signal.member == GlassdBus.Signal.queryFailed {
                            guard signal.member == GlassdBus.Signal.answered else { throw TestFailure("\(signal.arguments)") }
                            return
                        }
                    }
                    times.append(Self.seconds(start.duration(to: clock.now)))
                    // The app is idle again (its status line back) before the next tap.
                    try await vf.waitForDisplay(containing: "Tap to ask")
                }
                let sorted = times.sorted()
                Self.emit([
                    "what": "questions", "count": times.count, "p50_s": sorted[sorted.count / 2], "max_s": sorted.last ?? 0,
                ])
            }
        }
    }
}
