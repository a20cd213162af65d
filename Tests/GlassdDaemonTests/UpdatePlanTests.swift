// SPDX-License-Identifier: GPL-2.0-or-later
import Firmware
import Foundation
import Glasses
import Monocle
import Testing
@testable import Updates

@Suite("Update plan, bar and manifest", .timeLimit(.minutes(5)))
struct UpdatePlanTests {
    static let kinds: [GlassesKind] = [.monocle]

    static let device = DeviceInfo(
        versions: ["firmware": "v23.248.0754", "fpga": "v23.230.0808"], battery: 80, runningScripts: nil, storedScripts: nil)

    /// Images with an FPGA image pinned at `fpga` (nil: unpinned). The firmware side is planned
    /// the same way; its package needs a ZIP, which the integration tests make with nrfutil.
    static func images(fpga: String?) throws -> UpdateImages {
        UpdateImages([try FPGAUpdater().prepare([1, 2, 3], version: fpga, pinned: nil)])
    }

    @Test("an image is applied when its pinned version differs, always when none is pinned, and when forced")
    func plan() throws {
        let same = try Self.images(fpga: "v23.230.0808")
        #expect(UpdatePlan.make(same, device: Self.device, force: false).isEmpty)
        #expect(UpdatePlan.make(same, device: Self.device, force: true).contains("fpga"))
        #expect(UpdatePlan.outdated(same, device: Self.device, kind: .monocle) == nil)
        let newer = try Self.images(fpga: "v99.000.0001")
        #expect(UpdatePlan.make(newer, device: Self.device, force: false) == UpdatePlan(["fpga"]))
        #expect(UpdatePlan.outdated(newer, device: Self.device, kind: .monocle) == "Update available: FPGA v23.230.0808 → v99.000.0001.")
        let unpinned = try Self.images(fpga: nil)
        #expect(UpdatePlan.make(unpinned, device: Self.device, force: false).contains("fpga"))
        #expect(UpdatePlan.outdated(unpinned, device: Self.device, kind: .monocle) == nil)
        #expect(UpdatePlan.versions(nil, kind: .monocle) == "firmware unknown, fpga unknown")
    }

    @Test("one bar across the phases: never back, repeated phases placed after what is shown, 100 only when done")
    func bar() {
        var bar = Self.bar(firmwareBytes: 400_000, fpgaBytes: 444_430)
        var shown: [UInt32] = []
        for (phase, fraction) in [
            (UpdatePhase.checking, 0.0), (NordicDFUUpdater.enteringDFU, 0), (NordicDFUUpdater.flashingFirmware, 0.5),
            (NordicDFUUpdater.flashingFirmware, 0.25), (NordicDFUUpdater.flashingFirmware, 1), (.restarting, 0),
            (FPGAUpdater.erasingFPGA, 1), (FPGAUpdater.writingFPGA, 0.5), (FPGAUpdater.writingFPGA, 1),
            (FPGAUpdater.verifying, 1), (.restarting, 0), (.uploadingScripts, 1),
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

        var fpgaOnly = Self.bar(firmwareBytes: nil, fpgaBytes: 444_430)
        #expect(fpgaOnly.advance(NordicDFUUpdater.flashingFirmware, 1) == 0, "a phase not in the plan moves nothing")
        #expect(fpgaOnly.advance(FPGAUpdater.writingFPGA, 0.5) > 30)
    }

    /// A Monocle's bar for images of these sizes.
    static func bar(firmwareBytes: Int?, fpgaBytes: Int?) -> ProgressBar {
        var images: [ComponentImage] = []
        if let firmwareBytes {
            images.append(ComponentImage(component: "firmware", file: [UInt8](repeating: 0, count: firmwareBytes), version: nil, sha256: "", payload: 0))
        }
        if let fpgaBytes {
            images.append(ComponentImage(component: "fpga", file: [UInt8](repeating: 0, count: fpgaBytes), version: nil, sha256: "", payload: 0))
        }
        let all = UpdateImages(images)
        return UpdateRunner.progressBar(all, UpdatePlan(images.map(\.component)), updaters: GlassesKind.monocle.updaters)
    }

    @Test("Cancel is refused in the phases that would leave the glasses unusable, with a reason")
    func cancellable() {
        let phases: [UpdatePhase] = [
            .checking, NordicDFUUpdater.enteringDFU, NordicDFUUpdater.flashingFirmware, FPGAUpdater.erasingFPGA,
            FPGAUpdater.writingFPGA, FPGAUpdater.verifying, .uploadingScripts, .restarting, .done, .failed, .cancelled,
        ]
        let allowed = phases.filter { $0.cancelRefusal == nil }
        #expect(allowed == [.checking, FPGAUpdater.erasingFPGA, FPGAUpdater.writingFPGA, FPGAUpdater.verifying])
        #expect(NordicDFUUpdater.flashingFirmware.cancelRefusal?.contains("bootloader") == true)
    }

    @Test("manifest.toml: each image needs its file, version and SHA-256; names stay in the directory")
    func manifest() throws {
        let sha = String(repeating: "ab", count: 32)
        let good = try FirmwareManifest.parse(
            Array("[fpga]\nfile = \"f.bin\"\nversion = \"v1\"\nsha256 = \"\(sha.uppercased())\"\n".utf8), file: "m", kinds: Self.kinds)
        #expect(good == FirmwareManifest(entries: ["fpga": .init(file: "f.bin", version: "v1", sha256: sha)], kind: .monocle))
        for bad in [
            "", "[fpga]\nfile = \"f.bin\"\n", "[fpga]\nfile = \"../f.bin\"\nversion = \"v1\"\nsha256 = \"\(sha)\"\n",
            "[firmware]\nfile = \"f.zip\"\nversion = \"v1\"\nsha256 = \"xyz\"\n", "not toml [",
        ] {
            #expect(throws: UpdateRefusal.self, "\(bad)") { try FirmwareManifest.parse(Array(bad.utf8), file: "m", kinds: Self.kinds) }
        }
    }

    @Test("FPGA images: empty, too large and wrong checksums are refused")
    func fpgaImages() throws {
        let fpga = FPGAUpdater()
        #expect(throws: UpdateRefusal.self) { try fpga.prepare([], version: nil, pinned: nil) }
        #expect(throws: UpdateRefusal.self) {
            try fpga.prepare([UInt8](repeating: 0, count: FPGACommands.doneOffset + 1), version: nil, pinned: nil)
        }
        let image = try fpga.prepare([1, 2, 3], version: "v1", pinned: nil)
        #expect(try fpga.prepare([1, 2, 3], version: "v1", pinned: image.sha256.uppercased()).sha256 == image.sha256)
        #expect(throws: UpdateRefusal.self) { try fpga.prepare([1, 2, 4], version: "v1", pinned: image.sha256) }
    }
}
