// SPDX-License-Identifier: GPL-2.0-or-later
import Foundation
@testable import GlassdDaemon
import Glasses
import Monocle
import Testing
@testable import Updates

@Suite("Update plan, bar and manifest", .timeLimit(.minutes(5)))
struct UpdatePlanTests {
    static let device = DeviceInfo(
        firmwareVersion: "v23.248.0754", fpgaVersion: "v23.230.0808", battery: 80, runningScripts: nil, storedScripts: nil)

    /// Images with an FPGA image pinned at `fpga` (nil: unpinned). The firmware side is planned
    /// the same way; its package needs a ZIP, which the integration tests make with nrfutil.
    static func images(fpga: String?) throws -> UpdateImages {
        UpdateImages(firmware: nil, fpga: try UpdateImages.fpgaImage([1, 2, 3], version: fpga, pinned: nil))
    }

    @Test("an image is applied when its pinned version differs, always when none is pinned, and when forced")
    func plan() throws {
        let same = try Self.images(fpga: "v23.230.0808")
        #expect(UpdatePlan.make(same, device: Self.device, force: false).isEmpty)
        #expect(UpdatePlan.make(same, device: Self.device, force: true).fpga)
        #expect(UpdatePlan.outdated(same, device: Self.device) == nil)
        let newer = try Self.images(fpga: "v99.000.0001")
        #expect(UpdatePlan.make(newer, device: Self.device, force: false) == UpdatePlan(firmware: false, fpga: true))
        #expect(UpdatePlan.outdated(newer, device: Self.device) == "Update available: FPGA v23.230.0808 → v99.000.0001.")
        let unpinned = try Self.images(fpga: nil)
        #expect(UpdatePlan.make(unpinned, device: Self.device, force: false).fpga)
        #expect(UpdatePlan.outdated(unpinned, device: Self.device) == nil)
        #expect(UpdatePlan.versions(nil) == "firmware unknown, fpga unknown")
    }

    @Test("one bar across the phases: never back, repeated phases placed after what is shown, 100 only when done")
    func bar() {
        var bar = ProgressBar.plan(firmwareBytes: 400_000, fpgaBytes: 444_430)
        var shown: [UInt32] = []
        for (phase, fraction) in [
            (UpdatePhase.checking, 0.0), (.enteringDFU, 0), (.flashingFirmware, 0.5), (.flashingFirmware, 0.25),
            (.flashingFirmware, 1), (.restarting, 0), (.erasingFPGA, 1), (.writingFPGA, 0.5), (.writingFPGA, 1),
            (.verifying, 1), (.restarting, 0), (.uploadingScripts, 1),
        ] {
            shown.append(bar.advance(phase, fraction))
        }
        #expect(shown == shown.sorted(), "\(shown)")
        #expect(shown[2] > 15 && shown[2] < 35, "half the firmware: \(shown[2])")
        #expect(shown[3] == shown[2], "a resumed transfer does not move the bar back")
        // The second restarting follows the FPGA, not the firmware.
        #expect(shown[10] >= shown[9])
        #expect(shown.last! <= 99)
        #expect(bar.advance(.done, 1) == 100)

        var fpgaOnly = ProgressBar.plan(firmwareBytes: nil, fpgaBytes: 444_430)
        #expect(fpgaOnly.advance(.flashingFirmware, 1) == 0, "a phase not in the plan moves nothing")
        #expect(fpgaOnly.advance(.writingFPGA, 0.5) > 30)
    }

    @Test("Cancel is refused in the phases that would leave the glasses unusable, with a reason")
    func cancellable() {
        let allowed = UpdatePhase.allCases.filter { $0.cancelRefusal == nil }
        #expect(allowed == [.checking, .erasingFPGA, .writingFPGA, .verifying])
        #expect(UpdatePhase.flashingFirmware.cancelRefusal?.contains("bootloader") == true)
    }

    @Test("manifest.toml: each image needs its file, version and SHA-256; names stay in the directory")
    func manifest() throws {
        let sha = String(repeating: "ab", count: 32)
        let good = try FirmwareManifest.parse(
            Array("[fpga]\nfile = \"f.bin\"\nversion = \"v1\"\nsha256 = \"\(sha.uppercased())\"\n".utf8), file: "m")
        #expect(good == FirmwareManifest(firmware: nil, fpga: .init(file: "f.bin", version: "v1", sha256: sha)))
        for bad in [
            "", "[fpga]\nfile = \"f.bin\"\n", "[fpga]\nfile = \"../f.bin\"\nversion = \"v1\"\nsha256 = \"\(sha)\"\n",
            "[firmware]\nfile = \"f.zip\"\nversion = \"v1\"\nsha256 = \"xyz\"\n", "not toml [",
        ] {
            #expect(throws: UpdateRefusal.self, "\(bad)") { try FirmwareManifest.parse(Array(bad.utf8), file: "m") }
        }
    }

    @Test("FPGA images: empty, too large and wrong checksums are refused")
    func fpgaImages() throws {
        #expect(throws: UpdateRefusal.self) { try UpdateImages.fpgaImage([], version: nil, pinned: nil) }
        #expect(throws: UpdateRefusal.self) {
            try UpdateImages.fpgaImage([UInt8](repeating: 0, count: FPGACommands.doneOffset + 1), version: nil, pinned: nil)
        }
        let image = try UpdateImages.fpgaImage([1, 2, 3], version: "v1", pinned: nil)
        #expect(try UpdateImages.fpgaImage([1, 2, 3], version: "v1", pinned: image.sha256.uppercased()).sha256 == image.sha256)
        #expect(throws: UpdateRefusal.self) { try UpdateImages.fpgaImage([1, 2, 4], version: "v1", pinned: image.sha256) }
    }
}
