// SPDX-License-Identifier: GPL-2.0-or-later
import FakeKinds
import Glasses
import Testing
@testable import Updates

@Suite("Whether an update may start, and as what", .timeLimit(.minutes(5)))
struct UpdateAdmissionTests {
    static let kinds = [solo(), twin()]

    static func situation(
        _ state: SessionState, battery: UInt8? = 80, firmware: String = "f1", pending: Bool = false, sighted: Bool = false
    ) -> UpdateAdmission.Situation {
        UpdateAdmission.Situation(
            status: SessionStatus(
                state: state, info: DeviceInfo(versions: ["firmware": firmware], battery: battery, runningScripts: nil, storedScripts: nil)),
            kind: kinds[0], kinds: kinds, pendingForThem: pending, bootloaderSighted: sighted, minBattery: 20)
    }

    static func firmware(_ version: String?) throws -> UpdateImages {
        UpdateImages([try BootUpdater().prepare([1, 2, 3], version: version, pinned: nil)])
    }

    static func refusal(_ body: () throws -> Void) -> UpdateRefusal? {
        do {
            try body()
            return nil
        } catch let refusal as UpdateRefusal {
            return refusal
        } catch {
            return nil
        }
    }

    @Test("a kept image goes on first while the glasses are away; not when they are ready")
    func kept() {
        #expect(UpdateAdmission.resumesKept(Self.situation(.disconnected, pending: true)))
        #expect(!UpdateAdmission.resumesKept(Self.situation(.ready, pending: true)))
        #expect(!UpdateAdmission.resumesKept(Self.situation(.disconnected)))
    }

    @Test("glasses away: recovered from their bootloader when it is in sight and the image can do it; else not connected, or busy")
    func away() throws {
        let images = try Self.firmware("f2")
        #expect(try UpdateAdmission.decide(images, force: false, Self.situation(.disconnected, sighted: true)) == .recover)
        #expect(Self.refusal { _ = try UpdateAdmission.decide(images, force: false, Self.situation(.disconnected)) }?.reason == .notConnected)
        let busy = Self.refusal { _ = try UpdateAdmission.decide(images, force: false, Self.situation(.busy)) }
        #expect(busy == UpdateRefusal(.busy, "The glasses must be connected and idle for an update (they are busy)."))
    }

    @Test("ready: planned by version; a low battery refuses what would be sent, unless forced; nothing to send needs none")
    func ready() throws {
        #expect(try UpdateAdmission.decide(try Self.firmware("f2"), force: false, Self.situation(.ready)) == .start(UpdatePlan(["firmware"])))
        let low = Self.refusal { _ = try UpdateAdmission.decide(try Self.firmware("f2"), force: false, Self.situation(.ready, battery: 5)) }
        #expect(low == UpdateRefusal(.batteryLow, "The glasses' battery is at 5 %, below 20 %: charge them first, or force."))
        #expect(try UpdateAdmission.decide(try Self.firmware("f2"), force: true, Self.situation(.ready, battery: 5)) == .start(UpdatePlan(["firmware"])))
        #expect(try UpdateAdmission.decide(try Self.firmware("f1"), force: false, Self.situation(.ready, battery: 5)) == .start(UpdatePlan([])))
    }

    @Test("an image of a component these glasses lack, or a manifest for another kind, is refused naming both")
    func mismatch() throws {
        let arm = UpdateImages([try ArmUpdater(boots: nil).prepare([0xA7], version: "a2", pinned: nil)])
        #expect(
            Self.refusal { _ = try UpdateAdmission.decide(arm, force: false, Self.situation(.ready)) }
                == .image("The arm image is for a pair of twins; the paired glasses are a solo."))
        var pinned = try Self.firmware("f2")
        pinned.kind = GlassesKindName("twin")
        #expect(
            UpdateAdmission.mismatch(pinned, kind: Self.kinds[0], kinds: Self.kinds)
                == "The pinned images are for a pair of twins; the paired glasses are a solo.")
        #expect(UpdateAdmission.mismatch(try Self.firmware("f2"), kind: Self.kinds[0], kinds: Self.kinds) == nil)
    }
}
