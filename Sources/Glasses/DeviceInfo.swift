// SPDX-License-Identifier: GPL-2.0-or-later

/// What a session reads from the glasses as it checks them.
public struct DeviceInfo: Sendable, Equatable {
    /// The firmware version, e.g. "v23.248.0754" (Monocle) or "v25.080.0838" (Frame).
    public var firmwareVersion: String
    /// The Monocle's FPGA register 2, e.g. "v23.230.0808"; empty if unreadable or none.
    public var fpgaVersion: String
    /// 0...100.
    public var battery: UInt8?
    /// The version of glassd's scripts (or app) running on the glasses now, if any.
    public var runningScripts: String?
    /// The version of glassd's scripts (or app) stored on the glasses.
    public var storedScripts: String?

    public init(firmwareVersion: String, fpgaVersion: String, battery: UInt8?, runningScripts: String?, storedScripts: String?) {
        self.firmwareVersion = firmwareVersion
        self.fpgaVersion = fpgaVersion
        self.battery = battery
        self.runningScripts = runningScripts
        self.storedScripts = storedScripts
    }
}
