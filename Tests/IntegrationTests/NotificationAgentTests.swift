// SPDX-License-Identifier: GPL-2.0-or-later
import DBusKit
import Foundation
import GlassdAPI
import Testing

private let worldReady = BLEWorld.available || ProcessInfo.processInfo.environment["GLASSD_REQUIRE_BLE"] != nil
private let frame = 3

/// glassctl notify-agent against the real glassd (NotifyAgentTests has it against a stand-in):
/// notify-send, the desktop's daemon (dbusmock), the agent, glassd, a virtual Frame.
@Suite("The notification agent with the real glassd", .timeLimit(.minutes(5)), .serialized, .enabled(if: worldReady, "the Python BLE world is not set up"))
struct NotificationAgentTests {
    /// A virtual Frame, the desktop (its daemon) and the agent (`rules` its notify.toml) on glassd's
    /// bus, until `body` ends; `body` starts glassd itself (`config`), as often as it likes. The
    /// logs are shown on a failure.
    private func withDesktop(
        rules: String? = nil,
        _ body: (BLEWorld, String, NotifyWorld, BusConnection, VirtualFrame) async throws -> Void
    ) async throws {
        try await BLEWorld.with { ble in
            try await ble.withFrame(frame, txPower: -45) { _ in
                let config = try ble.writeConfig()
                let bus = try await ble.world.connect()
                let vf = VirtualFrame(bus: bus, index: frame)
                do {
                    try await NotifyWorld.with(glassdBus: ble.world.busAddress) { desktop in
                        if let rules { try desktop.writeRules(rules) }
                        try await desktop.withDesktopDaemon {
                            try await desktop.withAgent(["--reply-wait-ms", "20000"]) { _ in
                                do {
                                    try await body(ble, config, desktop, bus, vf)
                                } catch {
                                    throw TestFailure("\(error)\n--- the agent:\n\(desktop.read("agent.log").suffix(3000))")
                                }
                            }
                        }
                    }
                } catch {
                    await bus.close()
                    throw TestFailure("\(error)\n--- glassd:\n\(ble.world.log().suffix(6000))")
                }
                await bus.close()
            }
        }
    }

    @Test("glassd stops under the agent (its process ends, its name leaves the bus) and starts again on the same bus and state: what the desktop showed meanwhile reaches it, in order, and the glasses")
    func glassdRestarts() async throws {
        try await withDesktop { ble, config, desktop, bus, vf in
            let world = ble.world
            let owners = try await bus.signals(
                SignalMatch(sender: "org.freedesktop.DBus", interface: "org.freedesktop.DBus", member: "NameOwnerChanged"))
            let first = try await world.withGlassd(config: config) { glassd in
                try await ble.pairReady(frame, bus)
                try await vf.waitForDisplay(containing: "Mail: before the restart") {
                    _ = try await desktop.notifySend(["-a", "Mail", "before the restart"])
                }
                return glassd.pid
            }
            // withGlassd ends it (SIGTERM) and reaps it: the process is gone, and so is its name.
            #expect(kill(first, 0) == -1 && errno == ESRCH, "glassd \(first) still runs")
            try await within(.seconds(20), failure: { "\(GlassdBus.name) did not leave the bus" }) {
                for await signal in owners
                where signal.arguments.first?.string == GlassdBus.name && signal.arguments.last?.string?.isEmpty == true {
                    return
                }
                throw TestFailure("signals ended")
            }
            for n in 1...2 { _ = try await desktop.notifySend(["-a", "Chat", "while away \(n)"]) }

            try await world.withGlassd(config: config) { _ in
                let desk = DisplayDeskView(bus: bus)
                // glassd reconnects to the stored Frame by itself; the first shows with the second waiting behind it.
                try await vf.waitForDisplay(containing: "Chat: while away 1 +1 more", timeout: .seconds(60))
                let kept = try await desk.notifications()
                // Kept in memory only: this glassd has just the two, in the order they were sent.
                #expect(kept.map(\.summary) == ["while away 2", "while away 1"], "\(kept)")
                #expect(kept.count == 2 && kept[0].id > kept[1].id, "\(kept)")
                try await vf.waitForDisplay(containing: "Chat: while away 2", timeout: .seconds(30))
            }
        }
    }

    @Test("quiet hours through the agent: during them a normal notification never reaches glassd, a critical one does and shows")
    func quietHours() async throws {
        // Quiet from an hour ago to an hour from now (local time, across midnight too).
        let minute = Calendar.current.dateComponents([.hour, .minute], from: Date())
        let now = (minute.hour ?? 0) * 60 + (minute.minute ?? 0)
        func clock(_ m: Int) -> String { String(format: "%02d:%02d", (m + 1440) % 1440 / 60, (m + 1440) % 60) }
        let rules = "[quiet_hours]\nstart = \"\(clock(now - 60))\"\nend = \"\(clock(now + 60))\"\n"
        try await withDesktop(rules: rules) { ble, config, desktop, bus, vf in
            try await ble.world.withGlassd(config: config) { _ in
                try await ble.pairReady(frame, bus)
                _ = try await desktop.notifySend(["-a", "Chat", "not now"])
                _ = try await desktop.notifySend(["-u", "critical", "-a", "Alarm", "the oven is on"])
                // The agent decides in the order the calls came: once the critical one is on the
                // glasses, the normal one was decided before it.
                try await vf.waitForDisplay(containing: "Alarm: the oven is on")
                let desk = DisplayDeskView(bus: bus)
                let queue = try await desk.queue()
                #expect(queue.map(\.what) == ["notification"], "nothing waits behind it: \(queue)")
                let kept = try await desk.notifications()
                #expect(kept.map(\.summary) == ["the oven is on"], "\(kept)")
                #expect(kept.first?.urgency == 2, "\(kept)")
            }
        }
    }
}
