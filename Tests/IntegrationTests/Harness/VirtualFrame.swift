// SPDX-License-Identifier: GPL-2.0-or-later
import DBusKit
import Foundation

/// The test-control interface of virtual Frame `hci<index>` (Tests/World/README.md).
struct VirtualFrame: Sendable {
    let bus: BusConnection
    let index: Int

    var destination: String { "org.glassd.test.VirtualFrame.hci\(index)" }
    var path: String { "/org/glassd/vframe/hci\(index)" }
    static let interface = "org.glassd.test.VirtualFrame1"

    @discardableResult
    func call(_ member: String, _ arguments: [DBusValue] = []) async throws -> [DBusValue] {
        try await bus.call(destination, path: path, interface: Self.interface, member: member, arguments)
    }

    /// Whether the Frame holds a bond (with any central).
    func bonded() async throws -> Bool { try await call("Bonded").first?.bool == true }

    /// A Halo speaker's counters (its firmware's, and the run's "played" bytes and "gaps").
    func speakerStats() async throws -> [String: Int] { try await counters("SpeakerStats") }

    /// What the display shows: a line per row, "[red] " before coloured text.
    func displayText() async throws -> String { try await call("DisplayText").first?.string ?? "" }

    /// The files on its flash.
    func files() async throws -> [String] { try await call("Files").first?.elements?.compactMap(\.string) ?? [] }

    /// Its counters (writes, chunks, resets, taps, errors, ...).
    func stats() async throws -> [String: Int] { try await counters("Stats") }

    private func counters(_ member: String) async throws -> [String: Int] {
        guard case .dict(_, _, let entries)? = try await call(member).first else { return [:] }
        var out: [String: Int] = [:]
        for entry in entries {
            guard let key = entry.key.string else { continue }
            switch entry.value.unwrapped {
            case .uint64(let n): out[key] = Int(n)
            case .bool(let b): out[key] = b ? 1 : 0
            default: break
            }
        }
        return out
    }

    /// Waits (on DisplayChanged, no polling) until the display shows `text` (as read, colour
    /// tags and line breaks aside), after `action`; returns what it shows then.
    @discardableResult
    func waitForDisplay(
        containing text: String, timeout: Duration = .seconds(30), after action: @Sendable () async throws -> Void = {}
    ) async throws -> String {
        let frames = try await bus.signals(SignalMatch(path: path, interface: Self.interface, member: "DisplayChanged"))
        try await action()
        let now = try await displayText()
        if Self.shows(now, text) { return now }
        return try await within(timeout, failure: {
            "the virtual Frame did not show \(text) within \(timeout); it shows: \((try? await displayText()) ?? "?")"
        }) {
            for await frame in frames {
                if let shown = frame.arguments.first?.string, Self.shows(shown, text) { return shown }
            }
            throw TestFailure("display signals ended before it showed \(text)")
        }
    }

    /// Every frame the display shows after `action` began, up to the first that shows `text`:
    /// what flashed on the way is in it.
    func frames(
        until text: String, timeout: Duration = .seconds(30), after action: @Sendable () async throws -> Void
    ) async throws -> [String] {
        try await displayFrames(bus: bus, path: path, interface: Self.interface, until: { Self.shows($0, text) }, timeout: timeout, after: action)
    }

    static func shows(_ shown: String, _ text: String) -> Bool {
        let read = shown.split(separator: "\n").map { line in
            line.hasPrefix("[") ? String(line.drop { $0 != "]" }.dropFirst(2)) : String(line)
        }.joined(separator: " ")
        return shown.contains(text) || read.contains(text)
    }
}

extension BLEWorld {
    /// Runs a virtual Frame (with `halo`, a Halo) on adapter `hci<index>` until `body` ends; it
    /// advertises `Frame XX` with TX power `txPower`, and its flash is `frameFlash(index)`, kept across restarts.
    func withFrame<R: Sendable>(
        _ index: Int, txPower: Int = -50, halo: Bool = false, _ body: (Background) async throws -> R
    ) async throws -> R {
        try FileManager.default.createDirectory(atPath: frameFlash(index), withIntermediateDirectories: true)
        return try await withBackground(
            venvPython,
            [
                Paths.root + "/Tests/World/virtual_frame.py", "--adapter", "hci\(index)", "--tx-power", "\(txPower)",
                "--fs", frameFlash(index), "--record", world.directory + "/frame\(index).jsonl",
            ] + (halo ? ["--halo"] : []),
            environment: ["DBUS_SYSTEM_BUS_ADDRESS": world.busAddress], log: world.directory + "/frame\(index).log",
            firstLine: true
        ) { process, line in
            guard line == "READY" else { throw TestFailure("virtual Frame hci\(index) did not start: \(line)") }
            return try await body(process)
        }
    }

    /// The flash of virtual Frame `index`.
    func frameFlash(_ index: Int) -> String { world.directory + "/frame\(index)-flash" }
}

extension VirtualFrame {
    /// A virtual Halo's MCUboot slots, swap state, upload and SMP counters (SlotState's JSON).
    func slotState() async throws -> [String: Any] {
        let text = try await call("SlotState").first?.string ?? ""
        guard let state = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any] else {
            throw TestFailure("SlotState is not a JSON object: \(text)")
        }
        return state
    }

    /// The Booted signals (each boot's running version), subscribed before what causes them.
    func boots() async throws -> AsyncStream<BusSignal> {
        try await bus.signals(SignalMatch(path: path, interface: Self.interface, member: "Booted"))
    }

    /// Waits (bounded) in `boots` for a boot running `version`.
    static func waitForBooted(_ boots: AsyncStream<BusSignal>, version: String, timeout: Duration = .seconds(60)) async throws {
        try await within(timeout, failure: { "the virtual Halo did not boot \(version) within \(timeout)" }) {
            for await boot in boots where boot.arguments.first?.string == version { return }
            throw TestFailure("Booted signals ended before \(version) booted")
        }
    }
}

/// Every frame a virtual device's display shows (DisplayChanged at `path`, no polling) after
/// `action` began, up to the first that `shows` takes, within `timeout`.
func displayFrames(
    bus: BusConnection, path: String, interface: String, until shows: @escaping @Sendable (String) -> Bool, timeout: Duration,
    after action: @Sendable () async throws -> Void
) async throws -> [String] {
    let frames = try await bus.signals(SignalMatch(path: path, interface: interface, member: "DisplayChanged"))
    try await action()
    return try await within(timeout, failure: { "the virtual display did not show what was awaited within \(timeout)" }) {
        var seen: [String] = []
        for await frame in frames {
            guard let shown = frame.arguments.first?.string else { continue }
            seen.append(shown)
            if shows(shown) { return seen }
        }
        throw TestFailure("display signals ended first: \(seen)")
    }
}
