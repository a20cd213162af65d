// SPDX-License-Identifier: GPL-2.0-or-later
@testable import Firmware
import Glasses
import LinkKit
import Monocle
import Testing

@Suite("What an update checks after the glasses are back, and what it tries again", .timeLimit(.minutes(5)))
struct UpdateVerifyTests {
    static func info(firmware: String = "v99.001.0001", fpga: String = "v99.002.0002") -> DeviceInfo {
        DeviceInfo(versions: ["firmware": firmware, "fpga": fpga], battery: 80, runningScripts: nil, storedScripts: nil)
    }

    private func failure(_ body: () throws -> Void) -> String? {
        do {
            try body()
            return nil
        } catch {
            return "\(error)"
        }
    }

    @Test("the firmware: the wanted version passes; another, none or no answer fails, saying what runs")
    func firmware() {
        #expect(failure { try NordicDFUUpdater().verify(Self.info(), wanted: "v99.001.0001") } == nil)
        #expect(failure { try NordicDFUUpdater().verify(Self.info(), wanted: nil) } == nil)
        #expect(
            failure { try NordicDFUUpdater().verify(Self.info(firmware: "v23.248.0754"), wanted: "v99.001.0001") }
                == "The glasses run firmware v23.248.0754 after the update, not v99.001.0001.")
        #expect(failure { try NordicDFUUpdater().verify(Self.info(firmware: ""), wanted: nil) } == "The glasses report no firmware version after the update.")
        #expect(failure { try NordicDFUUpdater().verify(nil, wanted: nil) } != nil)
    }

    @Test("the FPGA: a blank version register fails even for an image with no pinned version; what runs is said")
    func fpga() {
        #expect(failure { try FPGAUpdater().verify(Self.info(), wanted: "v99.002.0002") } == nil)
        #expect(failure { try FPGAUpdater().verify(Self.info(), wanted: nil) } == nil)
        #expect(
            failure { try FPGAUpdater().verify(Self.info(fpga: ""), wanted: nil) }
                == "The glasses report no FPGA version after the update: the FPGA did not start from the new image (they run firmware v99.001.0001).")
        #expect(
            failure { try FPGAUpdater().verify(Self.info(fpga: "v23.230.0808"), wanted: "v99.002.0002") }
                == "The glasses' FPGA runs v23.230.0808 after the update, not v99.002.0002 (they run firmware v99.001.0001).")
        #expect(failure { try FPGAUpdater().verify(nil, wanted: nil) } != nil)
    }

    @Test("a bootloader that took no connection in its window is not tried again, and the failure says what brings them back")
    func unreachable() {
        let error = LinkError.unreachable("Could not reach the glasses' bootloader (le-connection-abort-by-local).")
        #expect(!NordicDFUUpdater.transferMayResume(error))
        #expect(NordicDFUUpdater.transferMayResume(LinkError.notFound("not yet")))
        #expect(
            "\(NordicDFUUpdater.explained(error))"
                == "Could not reach the glasses' bootloader (le-connection-abort-by-local). The glasses are left in their bootloader: glassctl update tries again.")
        #expect("\(NordicDFUUpdater.explained(LinkError.notFound("x")))" == "x")
    }
}
