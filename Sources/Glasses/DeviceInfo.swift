// SPDX-License-Identifier: GPL-2.0-or-later

/// What a session reads from the glasses as it checks them.
public struct DeviceInfo: Sendable, Equatable {
    /// Each component's version (org.glassd.Device1.Components), by the names the kind's
    /// updaters use: "firmware" for every kind, "fpga" for a Monocle's. A component whose version
    /// cannot be read is absent.
    public var versions: [String: String]
    /// 0...100.
    public var battery: UInt8?
    /// Whether the glasses charge, where they say (Halo's app reports it when it changes).
    public var charging: Bool?
    /// The version of glassd's scripts (or app) running on the glasses now, if any.
    public var runningScripts: String?
    /// The version of glassd's scripts (or app) stored on the glasses.
    public var storedScripts: String?

    public init(versions: [String: String], battery: UInt8?, runningScripts: String?, storedScripts: String?) {
        self.versions = versions.filter { !$0.value.isEmpty }
        self.battery = battery
        self.runningScripts = runningScripts
        self.storedScripts = storedScripts
    }

    /// The firmware's version, e.g. "v23.248.0754"; empty when unread. Every kind has firmware.
    public var firmwareVersion: String {
        get { versions[ComponentName.firmware] ?? "" }
        set { versions[ComponentName.firmware] = newValue.isEmpty ? nil : newValue }
    }

    /// A component's version; empty when unread or none.
    public func version(of component: String) -> String { versions[component] ?? "" }
}

/// The component every kind of glasses has.
public enum ComponentName {
    public static let firmware = "firmware"
}
