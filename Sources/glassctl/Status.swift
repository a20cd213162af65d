// SPDX-License-Identifier: GPL-2.0-or-later
import ArgumentParser
import DBusKit
import GlassdAPI
import GlassdContract

struct Status: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show glassd's version, mode, backend and the link to the glasses.")

    @OptionGroup var options: GlobalOptions

    struct Output: Encodable {
        var version: String
        var mode: String
        var backend: String
        var privacy: String
        var link: String
        var device: DeviceInfo?
    }

    func run() async throws {
        try await reportingErrors {
            let client = try await options.connect()
            let manager = client.manager
            let paired = try await manager.pairedDevice
            let status = Output(
                version: try await manager.version,
                mode: try await manager.mode,
                backend: try await manager.backend,
                privacy: try await manager.privacy,
                link: try await manager.state,
                device: try await client.devices().first { $0.path == paired })
            if options.json { return try printJSON(status) }
            print("version: \(status.version)")
            print("mode:    \(status.mode)")
            print("backend: \(status.backend.isEmpty ? "(not configured)" : status.backend)")
            print("privacy: \(status.privacy)")
            print("glasses: \(status.link)")
            if let d = status.device {
                if !d.state_reason.isEmpty { print("reason:  \(d.state_reason)") }
                print("device:  \(d.address) \(d.name), RSSI \(d.rssi) dBm, \(d.reconnect_count) reconnects")
                if !d.firmware_version.isEmpty {
                    print("battery: \(d.battery) %")
                    print("firmware \(d.firmware_version), FPGA \(d.fpga_version.isEmpty ? "unknown" : d.fpga_version)")
                    print("scripts: \(d.scripts_version.isEmpty ? "not running" : String(d.scripts_version.prefix(12)))")
                }
            }
        }
    }
}

struct ModeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mode", abstract: "Show or set the mode: assistant, translator or scene (hazards ahead).")

    @OptionGroup var options: GlobalOptions

    enum Mode: String, ExpressibleByArgument, CaseIterable {
        case assistant, translator, scene
    }

    @Argument(help: "The new mode.")
    var mode: Mode?

    func run() async throws {
        try await reportingErrors {
            let client = try await options.connect()
            if let mode { try await client.manager.setMode(mode.rawValue) }
            let current = try await client.manager.mode
            if options.json { return try printJSON(["mode": current]) }
            print(current)
        }
    }
}
