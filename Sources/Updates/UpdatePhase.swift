// SPDX-License-Identifier: GPL-2.0-or-later

/// Where an update job is (org.glassd.Job1.Status; the spelling is the contract).
public enum UpdatePhase: String, Sendable, CaseIterable {
    case checking
    case enteringDFU = "entering-dfu"
    case flashingFirmware = "flashing-firmware"
    case erasingFPGA = "erasing-fpga"
    case writingFPGA = "writing-fpga"
    case verifying
    case uploadingScripts = "uploading-scripts"
    case restarting
    case done, failed, cancelled

    /// Why Cancel is refused now; nil when stopping leaves the glasses as they were.
    public var cancelRefusal: String? {
        switch self {
        case .checking, .erasingFPGA, .writingFPGA, .verifying:
            // The FPGA boots its own image until the new one is verified and marked done.
            nil
        case .enteringDFU, .flashingFirmware:
            "The glasses are in their bootloader: stopping now would leave them without firmware until an update completes."
        case .restarting, .uploadingScripts:
            "The glasses are starting the new image; the update ends in a moment."
        case .done, .failed, .cancelled:
            "The update has already ended (\(rawValue))."
        }
    }
}
