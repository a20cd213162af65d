// SPDX-License-Identifier: GPL-2.0-or-later
import DBusKit
import Foundation
import GlassdAPI
import Testing

private let worldReady = BLEWorld.available || ProcessInfo.processInfo.environment["GLASSD_REQUIRE_BLE"] != nil
private let monocle = 2

/// Scene mode end to end: the virtual Monocle (real MicroPython) takes the frames the tests feed
/// its camera, glassd filters them and asks the fake server (which answers per image) for hazards.
@Suite("Scene mode on a virtual Monocle", .timeLimit(.minutes(5)), .serialized, .enabled(if: worldReady, "the Python BLE world is not set up"))
struct SceneModeTests {
    static func fixture(_ name: String) -> String { Paths.root + "/Tests/SceneTests/Fixtures/\(name).jpg" }

    @Test("frames: a sharp one sent as it is and its CAUTION shown and signalled; the same again unchanged; blurred, dark; a new scene's CLEAR signalled once; leaving stops the frames")
    func hazards() async throws {
        try await BLEWorld.with { ble in
            let config = try ble.writeConfig()
            let text = try String(contentsOfFile: config, encoding: .utf8)
            try (text + "[scene]\ninterval_seconds = 1\n").write(toFile: config, atomically: true, encoding: .utf8)
            try await ble.withSession(monocle, config: config) { bus, vm in
                try await ble.pairReady(monocle, bus)
                let world = ble.world
                let sharp = Self.fixture("sharp"), other = Self.fixture("other"), third = Paths.fixtures + "/photo.jpg"
                let answers = [
                    try await world.sha256(sharp): "CAUTION step ahead", try await world.sha256(other): "CLEAR",
                    try await world.sha256(third): "Clear.",
                ]
                try await world.setVisionAnswers(answers)
                let signals = try await bus.signals(SignalMatch(path: GlassdBus.managerPath, interface: GlassdBus.managerInterface))
                var events = signals.makeAsyncIterator()
                var alerts: [String] = []
                /// The first verdict after `image` is fed that is not `old` (what a frame of the
                /// image before gets, taken before the feed) nor busy.
                func verdict(after image: String, old: String? = nil) async throws -> String {
                    try await vm.call("FeedImage", [.string(image)])
                    while let signal = await events.next() {
                        if signal.member == GlassdBus.Signal.alert, let text = signal.arguments.first?.string { alerts.append(text) }
                        guard signal.member == GlassdBus.Signal.sceneFrame, let verdict = signal.arguments.dropFirst().first?.string
                        else { continue }
                        if verdict != "busy" && verdict != old { return verdict }
                    }
                    throw TestFailure("signals ended")
                }

                try await vm.call("FeedImage", [.string(sharp)])
                let mode = try await world.glassctl(["mode", "scene"])
                #expect(mode.ok, "\(mode.stderr)")
                #expect(try await verdict(after: sharp) == "sent")
                try await vm.waitForDisplay(containing: "CAUTION step ahead")
                #expect(try await verdict(after: sharp) == "unchanged")
                #expect(try await verdict(after: Self.fixture("blurred"), old: "unchanged") == "blurry")
                #expect(try await verdict(after: Self.fixture("dark"), old: "blurry") == "dark")
                #expect(try await verdict(after: other, old: "dark") == "sent")
                #expect(try await verdict(after: third, old: "unchanged") == "sent")
                // The second CLEAR changed nothing: two alerts in all (the next frame, unchanged,
                // comes after that answer).
                #expect(try await verdict(after: third) == "unchanged")
                #expect(alerts == ["CAUTION step ahead", "CLEAR"])
                // What the scene holds is the wearer's surroundings: in debug lines only.
                let told = world.log().split(separator: "\n").filter { !$0.hasPrefix("glassd[debug]") && $0.contains("step ahead") }
                #expect(told.isEmpty, "\(told)")
                #expect(!(try await vm.displayText()).contains("CAUTION"))

                // What was sent is the frame itself; only the caution frame is kept.
                let requests = try await world.serverRequests().filter { ($0["path"] as? String)?.contains("/chat/") == true }
                let images = requests.compactMap { $0["image_sha256"] as? String }
                #expect(images.first == answers.first { $0.value.hasPrefix("CAUTION") }?.key)
                #expect(images.count == 3, "\(images)")
                #expect(try await world.sqlite("SELECT count(*) FROM photos WHERE query_id LIKE 'scene/%'") == "1")
                #expect(try await world.sqlite("SELECT count(*) FROM messages") == "0", "scene frames are not turns")

                // A tap asks about the latest frame.
                try await vm.call("FeedAudio", [.string(try SpeechFixture.speech(in: world.directory))])
                try await world.setTranscript("what is in front of me")
                try await vm.call("Tap")
                while let signal = await events.next() {
                    if signal.member == GlassdBus.Signal.queryFailed { Issue.record("the question failed: \(signal.arguments)") }
                    if signal.member == GlassdBus.Signal.answered || signal.member == GlassdBus.Signal.queryFailed { break }
                }
                let question = try await world.serverRequests().last { ($0["path"] as? String)?.contains("/chat/") == true }
                #expect(question?["image_sha256"] as? String == (try await world.sha256(third)))
                #expect(try await world.sqlite("SELECT count(*) FROM messages") == "2")

                // Leaving scene mode stops the frames at once: none in two and a half intervals
                // (an absence takes time to see).
                #expect(try await world.glassctl(["mode", "assistant"]).ok)
                // glassctl is another connection: frames glassd signalled before the change may still
                // wait unread on this one, and a match added now would see them. A call over this
                // connection orders them: its reply comes after every signal sent before it.
                let now = try await bus.call(
                    GlassdBus.name, path: GlassdBus.managerPath, interface: "org.freedesktop.DBus.Properties", member: "Get",
                    [.string(GlassdBus.managerInterface), .string(GlassdBus.Property.mode)])
                #expect(now.first == .variant(.string("assistant")))
                let later = try await bus.signals(SignalMatch(path: GlassdBus.managerPath, interface: GlassdBus.managerInterface))
                let after = await withTaskGroup(of: Int?.self) { group in
                    group.addTask {
                        var frames = 0
                        for await signal in later where signal.member == GlassdBus.Signal.sceneFrame { frames += 1 }
                        return frames
                    }
                    group.addTask {
                        try? await Task.sleep(for: .milliseconds(2500))
                        return nil
                    }
                    _ = await group.next()
                    group.cancelAll()
                    return await group.compactMap { $0 }.reduce(0, +)
                }
                #expect(after == 0)
            }
        }
    }
}
