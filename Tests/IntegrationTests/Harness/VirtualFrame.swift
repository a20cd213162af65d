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
}

extension BLEWorld {
    /// Runs a virtual Frame on adapter `hci<index>` until `body` ends; it advertises `Frame XX`
    /// with TX power `txPower`, and its flash is `frameFlash(index)`, kept across restarts.
    func withFrame<R: Sendable>(_ index: Int, txPower: Int = -50, _ body: (Background) async throws -> R) async throws -> R {
        try FileManager.default.createDirectory(atPath: frameFlash(index), withIntermediateDirectories: true)
        return try await withBackground(
            venvPython,
            [
                Paths.root + "/Tests/World/virtual_frame.py", "--adapter", "hci\(index)", "--tx-power", "\(txPower)",
                "--fs", frameFlash(index), "--record", world.directory + "/frame\(index).jsonl",
            ],
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
