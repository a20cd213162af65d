// SPDX-License-Identifier: GPL-2.0-or-later

/// Timing of an update, whatever its kind; each updater keeps its protocol's own settings.
public struct UpdateSettings: Sendable {
    /// The bootloader gives up after about 3 minutes; waiting for it as long covers a slow reset.
    public var bootloaderTimeout: Duration = .seconds(180)
    /// Looking for a bootloader that may not be there (after a drop mid-command, at start-up).
    public var bootloaderSearch: Duration = .seconds(30)
    /// Connection attempts to a bootloader that advertises, as Nordic's DFU libraries allow
    /// for their scan-and-retry.
    public var bootloaderConnectWindow: Duration = .seconds(60)
    /// From a reset to the glasses ready again (reconnect, handshake, scripts uploaded).
    public var restartTimeout: Duration = .seconds(180)
    /// A reset ends the link at once on the glasses' side; BlueZ notices within the link's
    /// supervision timeout (at most 32 s in Bluetooth LE). A link still up after this did not see
    /// the reset (or the reset never came) and is dropped.
    public var resetDropTimeout: Duration = .seconds(40)
    /// Tries of one transfer: after a drop it resumes or starts again, as its updater can.
    public var attempts = 8

    public init(bootloaderConnectWindow: Duration = .seconds(60), restartTimeout: Duration = .seconds(180)) {
        self.bootloaderConnectWindow = bootloaderConnectWindow
        self.restartTimeout = restartTimeout
    }
}
