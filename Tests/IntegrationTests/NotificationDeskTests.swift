// SPDX-License-Identifier: GPL-2.0-or-later
import DBusKit
import Foundation
import GlassdAPI
import GlassdContract
import Testing

private let worldReady = BLEWorld.available || ProcessInfo.processInfo.environment["GLASSD_REQUIRE_BLE"] != nil
private let frame = 3

/// The display desk's rules with the real glassd and a virtual Frame, while an answer holds the
/// display: a critical notification takes it, one that waits past its expiry never shows, and
/// past 20 waiting the oldest goes.
@Suite("Notifications while an answer is read", .timeLimit(.minutes(5)), .serialized, .enabled(if: worldReady, "the Python BLE world is not set up"))
struct NotificationDeskTests {
    /// A typed question whose answer (echo: and the question) is `characters` long and takes about
    /// 1.5 s to stream ([slow]); its reading time is 2 s and 50 ms a character, 4 to 30 s.
    static func question(answerLength characters: Int) -> String {
        let start = "[slow] "
        return start + String(repeating: "more words ", count: 100).prefix(max(0, characters - 6 - start.count))
    }

    /// Runs `body` on a paired virtual Frame once the answer to `question` is whole and on the display.
    private func withAnswerBeingRead(
        _ question: String, _ body: (World, VirtualFrame, DisplayDeskView) async throws -> Void
    ) async throws {
        try await BLEWorld.with { ble in
            try await ble.withFrameSession(frame) { bus, vf in
                try await ble.pairReady(frame, bus)
                let desk = DisplayDeskView(bus: bus)
                let answer = try await ble.world.callManager(GlassdBus.Method.query, "s", [question], timeout: 60)
                guard answer.ok else { throw TestFailure("the question failed: \(answer.stderr)") }
                try await vf.waitForDisplay(containing: "more words")
                try await desk.waitForQueue { $0.first.map { $0.what == "answer" && $0.showing } == true }
                try await body(ble.world, vf, desk)
            }
        }
    }

    @Test("a critical notification takes the display from the answer being read at once; a normal one sent before it waits")
    func criticalInterruptsAnswer() async throws {
        // Its reading time is 30 s: a notification shown only after it would not show within 15 s.
        try await withAnswerBeingRead(Self.question(answerLength: 600)) { _, vf, desk in
            let normal = try await desk.notify("Build", "Tests passed")
            let critical = try await desk.notify("Alarm", "Smoke in the kitchen", urgency: 2)
            // Whole, with the normal one waiting behind it (the Frame may draw the heading alone first).
            let shown = try await vf.waitForDisplay(containing: "Alarm: Smoke in the kitchen +1 more", timeout: .seconds(15))
            #expect(!shown.contains("more words"), "\(shown)")
            // DisplayQueue follows (published apart from the write to the glasses).
            try await desk.waitForQueue {
                $0.map(\.id) == ["notification/\(critical)", "notification/\(normal)"] && $0.first?.showing == true
            }
        }
    }

    @Test("a notification that waits past its expire_ms behind the answer being read never shows: DisplayStats counts it expired, Notifications lists it expired")
    func expiryWhileAnswerIsRead() async throws {
        // Its reading time is 30 s, its expiry 0.5 s, the default wait 60 s.
        try await withAnswerBeingRead(Self.question(answerLength: 600)) { _, vf, desk in
            let before = try await desk.stats()
            var id: UInt32 = 0
            let stats = try await desk.waitForStats(timeout: .seconds(15), after: {
                id = try await desk.notify("Build", "Nightly done", expireMs: 500)
            }) { $0.expired == 1 }
            #expect(stats.shown == before.shown && stats.dropped == 0, "\(stats)")
            let kept = try await desk.notifications()
            #expect(kept.map(\.state) == ["expired"] && kept.first?.id == id, "\(kept)")
            let queue = try await desk.queue()
            #expect(queue.map(\.what) == ["answer"], "the answer still holds the display, nothing waits: \(queue)")
            #expect(!(try await vf.displayText()).contains("Nightly"))
        }
    }

    @Test("21 notifications behind the answer being read: the oldest is dropped and counted, the newest is kept and shows once the answer is read")
    func queueBound() async throws {
        // Its reading time is about 9 s: the 21 calls take well under a second.
        try await withAnswerBeingRead(Self.question(answerLength: 140)) { _, vf, desk in
            var ids: [UInt32] = []
            let stats = try await desk.waitForStats(after: {
                for n in 1...21 { ids.append(try await desk.notify("Chat", "message \(n)")) }
            }) { $0.dropped == 1 }
            #expect(stats.expired == 0, "\(stats)")
            let queue = try await desk.queue()
            #expect(queue.first.map { $0.what == "answer" && $0.showing } == true, "all came while the answer was read: \(queue)")
            #expect(queue.dropFirst().map(\.id) == ids.dropFirst().map { "notification/\($0)" }, "\(queue)")
            let kept = try await desk.notifications()
            #expect(kept.last.map { $0.id == ids[0] && $0.state == "dropped" } == true, "the oldest: \(kept)")
            #expect(kept.dropLast().allSatisfy { $0.state == "waiting" } && kept.count == 21, "\(kept)")
            // With those between dismissed, the newest is next: after the answer's reading time.
            for id in ids[1..<20] { try await desk.manager.dismissNotification(id: id) }
            try await vf.waitForDisplay(containing: "Chat: message 21", timeout: .seconds(30))
            // Listed shown once the glasses took it: surely when its reading time is over and the display free.
            try await desk.waitForQueue(timeout: .seconds(30)) { $0.isEmpty }
            #expect(try await desk.notifications().first.map { $0.id == ids[20] && $0.state == "shown" } == true)
        }
    }
}
