// SPDX-License-Identifier: GPL-2.0-or-later
import DBusKit
import Foundation

/// The test-control interface of virtual Monocle `hci<index>` (Tests/World/README.md).
struct VirtualMonocle: Sendable {
    let bus: BusConnection
    let index: Int

    var destination: String { "org.glassd.test.VirtualMonocle.hci\(index)" }
    var path: String { "/org/glassd/vmonocle/hci\(index)" }
    static let interface = "org.glassd.test.VirtualMonocle1"

    /// Inject and InjectRepeated return once every frame is notified at full rate: 10 MB of them
    /// take longer than D-Bus's usual 25 s on a loaded machine, without anything being stuck.
    @discardableResult
    func call(_ member: String, _ arguments: [DBusValue] = []) async throws -> [DBusValue] {
        try await bus.call(
            destination, path: path, interface: Self.interface, member: member, arguments,
            timeoutSeconds: member.hasPrefix("Inject") ? 300 : 25)
    }

    func displayText() async throws -> String { try await call("DisplayText").first?.string ?? "" }

    func stats() async throws -> [String: Int64] {
        (try await call("Stats").first?.stringKeyed ?? [:]).compactMapValues { value in
            if case .uint64(let v) = value.unwrapped { return Int64(v) }
            return value.unwrapped.int64
        }
    }

    /// The display's text as a person reads it: lines joined by spaces, colour tags dropped (a
    /// phrase wrapped over two lines still matches).
    static func reading(_ shown: String) -> String {
        shown.split(separator: "\n").map { line in
            line.hasPrefix("[") ? String(line.drop { $0 != "]" }.dropFirst(2)) : String(line)
        }.joined(separator: " ")
    }

    /// Whether a frame shows `text`, as drawn (with colour tags) or as read.
    static func shows(_ frame: String, _ text: String) -> Bool {
        frame.contains(text) || reading(frame).contains(text)
    }

    /// Waits (on DisplayChanged, no polling) until the display shows something containing
    /// `text` (see `shows`); returns that frame's text.
    @discardableResult
    func waitForDisplay(containing text: String, timeout: Duration = .seconds(30), after action: @Sendable () async throws -> Void = {})
        async throws -> String
    {
        try await waitForDisplay(containingAny: [text], timeout: timeout, after: action)
    }

    /// Every frame the display shows after `action` began, up to the first that shows `text`
    /// (see `shows`): what flashed on the way is in it.
    func frames(
        until text: String, timeout: Duration = .seconds(30), after action: @Sendable () async throws -> Void
    ) async throws -> [String] {
        try await displayFrames(bus: bus, path: path, interface: Self.interface, until: { Self.shows($0, text) }, timeout: timeout, after: action)
    }

    /// As `waitForDisplay(containing:)`, until the display shows any of `texts`.
    @discardableResult
    func waitForDisplay(containingAny texts: [String], timeout: Duration = .seconds(30), after action: @Sendable () async throws -> Void = {})
        async throws -> String
    {
        let frames = try await bus.signals(SignalMatch(path: path, interface: Self.interface, member: "DisplayChanged"))
        try await action()
        let now = try await displayText()
        if texts.contains(where: { Self.shows(now, $0) }) { return now }
        let wanted = texts.joined(separator: " or ")
        return try await within(timeout, failure: {
            "the virtual display did not show \(wanted) within \(timeout); it shows: \((try? await displayText()) ?? "?")"
        }) {
            for await frame in frames {
                if let shown = frame.arguments.first?.string, texts.contains(where: { Self.shows(shown, $0) }) { return shown }
            }
            throw TestFailure("display signals ended before it showed \(wanted)")
        }
    }
}
