// SPDX-License-Identifier: GPL-2.0-or-later
import Glasses
import Monocle

/// What an update does to these glasses: each image is applied when the glasses run another
/// version than the one pinned, always when no version is pinned (a file passed by hand) or when
/// forced.
public struct UpdatePlan: Sendable, Equatable {
    public var firmware: Bool
    public var fpga: Bool

    public init(firmware: Bool, fpga: Bool) {
        self.firmware = firmware
        self.fpga = fpga
    }

    public var isEmpty: Bool { !firmware && !fpga }

    public static func make(_ images: UpdateImages, device: DeviceInfo?, force: Bool) -> UpdatePlan {
        func needed(_ wanted: String?, _ has: String?) -> Bool { force || wanted == nil || wanted != has }
        return UpdatePlan(
            firmware: images.firmware.map { needed($0.version, device?.firmwareVersion) } ?? false,
            fpga: images.fpga.map { needed($0.version, device?.fpgaVersion) } ?? false)
    }

    /// Why glasses running `device` need the pinned images (Device1.StateReason); nil when current.
    public static func outdated(_ images: UpdateImages, device: DeviceInfo) -> String? {
        var reasons: [String] = []
        if let wanted = images.firmware?.version, wanted != device.firmwareVersion {
            reasons.append("firmware \(shown(device.firmwareVersion)) → \(wanted)")
        }
        if let wanted = images.fpga?.version, wanted != device.fpgaVersion {
            reasons.append("FPGA \(shown(device.fpgaVersion)) → \(wanted)")
        }
        return reasons.isEmpty ? nil : "Update available: " + reasons.joined(separator: ", ") + "."
    }

    /// The versions as history shows them: "firmware v…, fpga v…".
    public static func versions(_ info: DeviceInfo?) -> String {
        "firmware \(shown(info?.firmwareVersion)), fpga \(shown(info?.fpgaVersion))"
    }

    private static func shown(_ version: String?) -> String {
        guard let version, !version.isEmpty else { return "unknown" }
        return version
    }
}
