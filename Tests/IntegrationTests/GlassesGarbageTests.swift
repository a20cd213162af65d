// SPDX-License-Identifier: GPL-2.0-or-later
import Concurrency
import DBusKit
import Foundation
import GlassdAPI
import Testing

private let worldReady = BLEWorld.available || ProcessInfo.processInfo.environment["GLASSD_REQUIRE_BLE"] != nil
private let monocle = 2
private let devicePath = GlassdBus.devicePath(address: BLEWorld.adapterAddress(monocle))

/// What broken, half-updated or hostile glasses may send, on a virtual Monocle: every frame
/// notified at full rate on the real characteristics.
@Suite("Garbage from the glasses", .timeLimit(.minutes(10)), .serialized, .enabled(if: worldReady, "the Python BLE world is not set up"))
struct GlassesGarbageTests {
    /// glassd's resident memory, in KiB.
    private func residentKiB(_ pid: Int32) throws -> Int {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        let line = try #require(status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") })
        return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
    }

    /// Frames of random length and bytes, some starting with a real command.
    private static func randomFrames(_ count: Int, seed: UInt64, maxLength: Int) -> [[UInt8]] {
        var random = SplitMix64(seed: seed)
        let prefixes = ["rdy:", "ast:", "dat:", "aen:", "ist:", "idt:", "ien:", "bat:", "ack:", "can:", "sst:", "sen:", "pin:", "res:"]
        return (0..<count).map { _ in
            let length = 1 + Int(random.next() % UInt64(maxLength))
            var frame = (0..<length).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            if random.next() % 3 == 0 {
                let prefix = Array(prefixes[Int(random.next() % UInt64(prefixes.count))].utf8)
                frame.replaceSubrange(0..<min(prefix.count, frame.count), with: prefix)
            }
            return frame
        }
    }

    private static func frames(_ texts: [String]) -> DBusValue {
        .array(element: "ay", texts.map { .bytes(Array($0.utf8)) })
    }

    @Test("random and crafted frames on both characteristics at full rate, 10 MB of dat: and a REPL that prints on: glassd stays up, its memory bounded, each bad kind logged rarely, and the next tap question is answered")
    func garbage() async throws {
        try await BLEWorld.with { ble in
            // The flood keeps the virtual device's own host process busy: callbacks its
            // MicroPython scheduler drops meanwhile are the device's, not glassd's doing.
            try await ble.withSession(monocle, chunksMayDrop: true) { bus, vm in
                try await ble.pairReady(monocle, bus)
                let pid = try #require(
                    try await bus.call(
                        "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                        member: "GetConnectionUnixProcessID", [.string(GlassdBus.name)]
                    ).first?.uint32)
                let before = try residentKiB(Int32(pid))
                let payload = 253 - 3 - 4  // the default MTU less ATT's 3 bytes and the prefix

                // Crafted: unknown commands, cut payloads, ends without starts, starts without ends.
                try await vm.call(
                    "Inject",
                    [
                        .string("data"),
                        Self.frames([
                            "x", "abc", "XYZ:", "zzz:garbage", "bat:", "bat:999", "bat:12345678901", "ack:-1", "ack:99999999999",
                            "res:\u{1}", "ien:", "aen:", "sen:", "ist:", "idt:not a jpeg", "idt:", "ast:", "dat:", "rdy:",
                            "can:", "stp:", "dsp:hello", "end:", "cap:", "alr:boo", "pin:", "pon:",
                        ]),
                    ])
                // A photo that never ends, and audio far past any question: 10 MB of dat:.
                try await vm.call("Inject", [.string("data"), Self.frames(["ist:"])])
                try await vm.call("InjectRepeated", [.string("data"), .bytes(Array("idt:".utf8) + [UInt8](repeating: 0xAB, count: payload)), .uint32(2000)])
                try await vm.call("Inject", [.string("data"), Self.frames(["ast:"])])
                let tenMB = 10 * 1024 * 1024 / payload
                try await vm.call("InjectRepeated", [.string("data"), .bytes(Array("dat:".utf8) + [UInt8](repeating: 0x7F, count: payload)), .uint32(UInt32(tenMB))])
                // Random frames, in batches, on both characteristics; a REPL that keeps printing.
                for batch in 0..<10 {
                    let data = Self.randomFrames(500, seed: UInt64(batch), maxLength: payload + 4)
                    try await vm.call("Inject", [.string("data"), .array(element: "ay", data.map { .bytes($0) })])
                }
                for batch in 0..<4 {
                    let serial = Self.randomFrames(500, seed: UInt64(100 + batch), maxLength: payload + 4)
                    try await vm.call("Inject", [.string("serial"), .array(element: "ay", serial.map { .bytes($0) })])
                }
                try await vm.call("InjectRepeated", [.string("serial"), .bytes(Array("OK spam spam spam\r\n>".utf8)), .uint32(5000)])
                let injected = try await vm.stats()["injected_frames"] ?? 0
                #expect(injected > 50_000, "\(injected)")
                // Frames are handled in order: once this battery level shows, glassd has seen all
                // it kept. Its reader's queue is bounded and drops what it cannot hold while it is
                // behind (logged), so the marker is sent again until it is seen.
                var caughtUp = false
                for _ in 0..<30 where !caughtUp {
                    try await vm.call("Inject", [.string("data"), Self.frames(["bat:42"])])
                    caughtUp = (try? await waitForProperty(
                        bus, destination: GlassdBus.name, path: devicePath, interface: GlassdBus.deviceInterface,
                        GlassdBus.DeviceProperty.battery, equals: .byte(42), timeout: .seconds(4))) != nil
                }
                #expect(caughtUp, "glassd never showed the battery level sent after the garbage")

                // Still serving, ready again (the same link, or the next one), memory bounded.
                #expect(try await bus.call(
                    GlassdBus.name, path: GlassdBus.managerPath, interface: "org.freedesktop.DBus.Properties", member: "Get",
                    [.string(GlassdBus.managerInterface), .string(GlassdBus.Property.version)]).first != nil)
                try await waitForProperty(
                    bus, destination: GlassdBus.name, path: devicePath, interface: GlassdBus.deviceInterface,
                    GlassdBus.DeviceProperty.state, equals: .string("ready"), timeout: .seconds(120))
                let after = try residentKiB(Int32(pid))
                #expect(after - before < 64 * 1024, "resident memory grew from \(before) KiB to \(after) KiB")
                // Tens of thousands of bad frames, a few lines: each kind once, then at most every 30 s.
                let lines = ble.world.log().split(separator: "\n").filter { $0.contains("malformed data message dropped: ") }
                let kinds = Dictionary(grouping: lines) { $0.split(separator: ": ").dropFirst(2).first?.split(separator: " (").first ?? "" }
                #expect(!kinds.isEmpty && lines.count <= 40, "\(lines.count) lines")
                #expect(kinds.values.allSatisfy { $0.count <= 4 }, "\(kinds.mapValues(\.count))")

                // The garbage started and cancelled questions on the virtual glasses themselves (their
                // scripts answered taps that never were): they are switched off and on, as a user
                // would, and glassd brings them back through its normal reconnect. Then the next
                // tap question is heard and answered.
                guard case .uint32(let reconnects)? = try await glassesProperty(bus, devicePath, GlassdBus.DeviceProperty.reconnectCount)
                else { throw TestFailure("no ReconnectCount") }
                try await vm.call("PowerCycle")
                try await waitForProperty(
                    bus, destination: GlassdBus.name, path: devicePath, interface: GlassdBus.deviceInterface,
                    GlassdBus.DeviceProperty.reconnectCount, equals: .uint32(reconnects + 1), timeout: .seconds(60))
                try await waitForProperty(
                    bus, destination: GlassdBus.name, path: devicePath, interface: GlassdBus.deviceInterface,
                    GlassdBus.DeviceProperty.state, equals: .string("ready"), timeout: .seconds(120))
                try await vm.call("FeedAudio", [.string(try SpeechFixture.speech(in: ble.world.directory))])
                try await ble.world.setTranscript("what is the tallest mountain")
                let signals = try await bus.signals(SignalMatch(path: GlassdBus.managerPath, interface: GlassdBus.managerInterface))
                try await vm.call("Tap")
                // The tap's question is the one transcribed; its end is the one with that id.
                let end = try await within(.seconds(60), failure: { "the tap question was not transcribed and answered" }) {
                    var question: DBusValue?
                    for await signal in signals {
                        if signal.member == GlassdBus.Signal.transcribed { question = signal.arguments.first }
                        guard let question, signal.arguments.first == question,
                            signal.member == GlassdBus.Signal.answered || signal.member == GlassdBus.Signal.queryFailed
                        else { continue }
                        return signal
                    }
                    throw TestFailure("signals ended")
                }
                #expect(end.member == GlassdBus.Signal.answered, "\(end.arguments)")
            }
        }
    }

    @Test("a recording or photo the glasses start and never end fails NoSpeech after a few silent seconds and they are ready again; a scene frame nobody asked for changes nothing")
    func neverEnded() async throws {
        try await BLEWorld.with { ble in
            try await ble.withSession(monocle) { bus, vm in
                try await ble.pairReady(monocle, bus)
                let signals = try await bus.signals(SignalMatch(path: GlassdBus.managerPath, interface: GlassdBus.managerInterface))
                for start in ["ast:", "ist:"] {
                    try await vm.call("Inject", [.string("data"), Self.frames([start, "dat:\u{1}\u{2}", "idt:\u{ff}"])])
                    let failed = try await within(.seconds(30), failure: { "\(start) that never ended did not fail" }) {
                        for await signal in signals where signal.member == GlassdBus.Signal.queryFailed { return signal }
                        throw TestFailure("signals ended")
                    }
                    #expect(failed.arguments.dropFirst().first == .string(GlassdErrorName.noSpeech), "\(failed.arguments)")
                    #expect(failed.arguments.last?.string?.contains("stopped sending") == true, "\(failed.arguments)")
                    try await waitForProperty(
                        bus, destination: GlassdBus.name, path: devicePath, interface: GlassdBus.deviceInterface,
                        GlassdBus.DeviceProperty.state, equals: .string("ready"))
                }
                try await vm.call("Inject", [.string("data"), Self.frames(["sst:", "idt:\u{1}", "bat:43"])])
                try await waitForProperty(
                    bus, destination: GlassdBus.name, path: devicePath, interface: GlassdBus.deviceInterface,
                    GlassdBus.DeviceProperty.battery, equals: .byte(43))
                #expect(try await glassesProperty(bus, devicePath, GlassdBus.DeviceProperty.state) == .string("ready"))
            }
        }
    }
}
