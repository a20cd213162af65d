// SPDX-License-Identifier: GPL-2.0-or-later
import ArgumentParser
import DBusKit
import Foundation
import GlassdAPI
import GlassdContract

struct Scan: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "List the Monocles in range, strongest first.")

    @OptionGroup var options: GlobalOptions

    @Option(help: "Seconds to scan.")
    var seconds: UInt32 = 5

    struct Device: Encodable {
        var address: String
        var name: String
        var rssi: Int16
    }

    func run() async throws {
        try await reportingErrors {
            let client = try await options.connect()
            let seen = try await client.manager.scan(seconds: seconds, timeoutSeconds: Double(seconds) + 30)
            let devices = (seen.elements ?? []).compactMap { row -> Device? in
                guard let f = row.elements, f.count == 3, let address = f[0].string, let name = f[1].string,
                    let rssi = f[2].int64
                else { return nil }
                return Device(address: address, name: name, rssi: Int16(clamping: rssi))
            }
            if options.json { return try printJSON(devices) }
            for d in devices { print("\(d.address)  \(String(d.rssi).padding(toLength: 5, withPad: " ", startingAt: 0)) dBm  \(d.name)") }
        }
    }
}

struct Pair: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Pair with the nearest Monocle, or the one at ADDRESS, and keep it connected.")

    @OptionGroup var options: GlobalOptions

    @Argument(help: "AA:BB:CC:DD:EE:FF; leave out for the strongest Monocle in range.")
    var address: String?

    func run() async throws {
        try await reportingErrors {
            let client = try await options.connect()
            // scan_timeout may be up to 300 s, then the first connection.
            let path = try await client.manager.pair(address: address ?? "", timeoutSeconds: 330)
            if options.json { return try printJSON(["device": path]) }
            print(path)
        }
    }
}

struct Unpair: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Disconnect and forget the paired glasses.")

    @OptionGroup var options: GlobalOptions

    func run() async throws {
        try await reportingErrors {
            try await options.connect().manager.unpair()
            if options.json { try printJSON(["unpaired": true]) }
        }
    }
}

/// A device object's properties, as glassctl shows them.
struct DeviceInfo: Encodable {
    var path: String
    var address: String
    var name: String
    var kind: String
    var rssi: Int64
    var connected: Bool
    var state: String
    var state_reason: String
    var reconnect_count: UInt32
    var last_seen_ms: Int64
    var firmware_version: String
    var fpga_version: String
    var scripts_version: String
    var battery: Int64
    var radios: [Radio]

    /// One radio of the glasses (Device1.Radios).
    struct Radio: Encodable {
        var address: String
        var role: String
        var state: String
    }

    init(path: String, _ p: GlassdBus.Device1.Properties) {
        self.path = path
        address = p.address ?? ""
        name = p.name ?? ""
        kind = p.kind ?? ""
        rssi = Int64(p.rssi ?? 0)
        connected = p.connected ?? false
        state = p.state ?? ""
        state_reason = p.stateReason ?? ""
        reconnect_count = p.reconnectCount ?? 0
        firmware_version = p.firmwareVersion ?? ""
        fpga_version = p.fpgaVersion ?? ""
        scripts_version = p.scriptsVersion ?? ""
        battery = Int64(p.battery ?? 0)
        last_seen_ms = Int64(clamping: p.lastSeen ?? 0)
        radios = (p.radios?.elements ?? []).compactMap { radio in
            guard case .structure(let fields) = radio, fields.count == 3, let address = fields[0].string, let role = fields[1].string,
                let state = fields[2].string
            else { return nil }
            return Radio(address: address, role: role, state: state)
        }
    }
}

extension Client {
    /// Every org.glassd.Device1 object, by path.
    func devices() async throws -> [DeviceInfo] {
        let reply = try await connection.call(
            GlassdBus.name, path: GlassdBus.managerPath, interface: "org.freedesktop.DBus.ObjectManager",
            member: "GetManagedObjects")
        guard case .dict(_, _, let entries)? = reply.first else { return [] }
        return entries.compactMap { entry -> DeviceInfo? in
            guard let path = entry.key.string, let properties = entry.value.stringKeyed?[GlassdBus.deviceInterface],
                let typed = try? GlassdBus.Device1.Properties(properties)
            else { return nil }
            return DeviceInfo(path: path, typed)
        }.sorted { $0.address < $1.address }
    }
}

struct Devices: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "List the glasses glassd knows.")

    @OptionGroup var options: GlobalOptions

    func run() async throws {
        try await reportingErrors {
            let devices = try await options.connect().devices()
            if options.json { return try printJSON(devices) }
            for d in devices {
                print("\(d.address)  \(d.state.padding(toLength: 12, withPad: " ", startingAt: 0)) \(d.rssi) dBm  reconnects \(d.reconnect_count)  \(d.kind.isEmpty ? "" : d.kind + " ")\(d.name)")
                // Glasses of more than one radio: each arm's own state.
                if d.radios.count > 1 {
                    for radio in d.radios { print("    \(radio.role): \(radio.address) \(radio.state)") }
                }
            }
        }
    }
}

extension DBusValue {
    /// A value as one short line of text.
    var display: String {
        switch self {
        case .string(let s), .objectPath(let s), .signature(let s): s
        case .bool(let b): String(b)
        case .variant(let v): v.display
        default: int64.map(String.init) ?? (uint64Value.map(String.init) ?? "\(self)")
        }
    }

    private var uint64Value: UInt64? {
        if case .uint64(let v) = self { return v }
        return nil
    }
}
