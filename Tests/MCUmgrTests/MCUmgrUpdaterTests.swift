// SPDX-License-Identifier: GPL-2.0-or-later
import Concurrency
import Glasses
import LinkKit
import Logging
import MCUmgr
import Testing

/// The Halo updater's decisions against an SMP fake with MCUboot's slots (FakeHalo).
@Suite("MCUmgr updates, in memory", .timeLimit(.minutes(5)))
struct MCUmgrUpdaterTests {
    static let old = FakeHalo.Image(version: "0.8.7", hash: [UInt8](repeating: 0x87, count: 32))

    static func image() throws -> ComponentImage {
        try MCUmgrUpdater().prepare(try MCUbootImageTests.fixture("signed.bin"), version: nil, pinned: nil)
    }

    static func halo(_ configure: (inout FakeHalo.State) -> Void = { _ in }) throws -> FakeHalo {
        FakeHalo(running: old, incoming: try MCUbootImage(bytes: try MCUbootImageTests.fixture("signed.bin")), configure: configure)
    }

    static func context(_ halo: FakeHalo, _ job: RecordedJob, restart: Duration = .seconds(20)) -> UpdateContext {
        UpdateContext(
            session: halo, link: NoBootloader(), statuses: halo.statuses, settings: UpdateSettings(restartTimeout: restart), job: job,
            logger: Logger(label: "test"), recovered: {})
    }

    static func failure(_ body: () async throws -> Void) async -> String? {
        do {
            try await body()
            return nil
        } catch {
            return "\(error)"
        }
    }

    @Test("uploaded from zero, tested, and confirmed only once the glasses are back ready with the new version")
    func update() async throws {
        let halo = try Self.halo()
        let job = RecordedJob()
        let info = try await MCUmgrUpdater().apply(try Self.image(), Self.context(halo, job))
        #expect(info?.firmwareVersion == "0.8.8")
        let s = halo.snapshot
        #expect(s.running.version == "0.8.8" && s.running.confirmed)
        #expect(s.resets == 1)
        #expect(s.uploads.filter { $0.offset == 0 }.count == 1)
        // The confirm came on the link after the reset, with the app ready.
        #expect(s.confirmedWhile.map(\.generation) == [2])
        #expect(s.confirmedWhile.map(\.state) == [.ready])
        #expect(job.entered == ["uploading-firmware", "testing", "restarting", "verifying", "confirming"])
    }

    @Test("Cancel during the upload: stopped there, the running image untouched and nothing marked")
    func cancelUpload() async throws {
        let halo = try Self.halo { $0.hangAt = 2000 }
        let job = RecordedJob()
        let image = try Self.image()
        let update = Task { try await MCUmgrUpdater().apply(image, Self.context(halo, job)) }
        // Bounded inside the suite's limit: alone it takes milliseconds, but at the full suite's start on 2 busy
        // cores the whole test process has stalled for over a minute.
        #expect(try await halo.hung.wait(timeout: .seconds(240), clock: ContinuousClock()) { $0 } == true)
        update.cancel()
        await #expect(throws: CancellationError.self) { _ = try await update.value }
        let s = halo.snapshot
        #expect(s.running == Self.old && !s.pending && s.resets == 0)
        #expect(job.entered == ["uploading-firmware"])
        #expect(MCUmgrUpdater.uploadingFirmware.cancelRefusal == nil)
        #expect(MCUmgrUpdater.testing.cancelRefusal != nil && MCUmgrUpdater.confirming.cancelRefusal != nil)
    }

    @Test("glasses on a test boot nobody confirmed: refused, nothing uploaded")
    func unconfirmedRunning() async throws {
        let halo = try Self.halo { $0.running.confirmed = false }
        let error = await Self.failure { _ = try await MCUmgrUpdater().apply(try Self.image(), Self.context(halo, RecordedJob())) }
        #expect(error?.contains("on a test boot nobody confirmed: confirm or revert it first") == true, "\(error ?? "")")
        #expect(halo.snapshot.uploads.isEmpty)
        #expect(halo.snapshot.resets == 0)
    }

    @Test("slot 1 already holds the image: no upload, straight to the test boot")
    func skipUpload() async throws {
        let incoming = try MCUbootImage(bytes: try MCUbootImageTests.fixture("signed.bin"))
        let halo = try Self.halo { $0.held = FakeHalo.Image(version: "0.8.8", hash: incoming.tlvHash, confirmed: false) }
        let info = try await MCUmgrUpdater().apply(try Self.image(), Self.context(halo, RecordedJob()))
        #expect(info?.firmwareVersion == "0.8.8")
        #expect(halo.snapshot.uploads.isEmpty)
        #expect(halo.snapshot.running.confirmed)
    }

    @Test("a drop mid-upload: resumed from the offset the glasses hold, never from zero again")
    func resume() async throws {
        let halo = try Self.halo { $0.dropAt = 1000 }
        _ = try await MCUmgrUpdater().apply(try Self.image(), Self.context(halo, RecordedJob()))
        let uploads = halo.snapshot.uploads
        let starts = uploads.enumerated().filter { $0.element.offset == 0 }
        #expect(starts.count == 2)
        // The second naming of the upload was answered with what the glasses held.
        let resumed = try #require(starts.last)
        #expect(resumed.element.answered >= 1000)
        #expect(uploads[resumed.offset...].dropFirst().allSatisfy { $0.offset >= 1000 })
        #expect(halo.snapshot.running.version == "0.8.8")
    }

    @Test("the link drops with the reset before the glasses took it: the health check finds the test still pending, resets again, confirms")
    func resetLost() async throws {
        let halo = try Self.halo { $0.loseNextReset = true }
        let job = RecordedJob()
        let info = try await MCUmgrUpdater().apply(try Self.image(), Self.context(halo, job))
        #expect(info?.firmwareVersion == "0.8.8")
        let s = halo.snapshot
        #expect(s.resets == 1)
        #expect(s.running.version == "0.8.8" && s.running.confirmed)
        #expect(s.confirmedWhile.map(\.generation) == [3])
        #expect(job.entered.filter { $0 == "restarting" }.count == 2)
    }

    @Test("an image that does not boot: the glasses went back, nothing confirmed")
    func wentBack() async throws {
        let halo = try Self.halo { $0.crashNextBoot = true }
        let error = await Self.failure { _ = try await MCUmgrUpdater().apply(try Self.image(), Self.context(halo, RecordedJob())) }
        #expect(error == "The glasses went back to version 0.8.7; nothing was confirmed.")
        #expect(halo.snapshot.confirmedWhile.isEmpty)
        #expect(halo.snapshot.running == Self.old)
    }

    @Test("firmware that confirms itself: healthy, no confirm sent")
    func selfConfirmed() async throws {
        let halo = try Self.halo { $0.selfConfirm = true }
        let job = RecordedJob()
        let info = try await MCUmgrUpdater().apply(try Self.image(), Self.context(halo, job))
        #expect(info?.firmwareVersion == "0.8.8")
        #expect(halo.snapshot.confirmedWhile.isEmpty)
        #expect(!job.entered.contains("confirming"))
    }

    @Test("the new image's app silent: reset so MCUboot reverts, nothing confirmed")
    func silentReverted() async throws {
        let halo = try Self.halo { $0.silentNextImage = true }
        let error = await Self.failure {
            _ = try await MCUmgrUpdater().apply(try Self.image(), Self.context(halo, RecordedJob(), restart: .milliseconds(300)))
        }
        #expect(error?.contains("glassd's app did not answer") == true, "\(error ?? "")")
        #expect(error?.contains("MCUboot reverts to the old image; nothing was confirmed") == true)
        let s = halo.snapshot
        #expect(s.resets == 2)
        #expect(s.running == Self.old)
        #expect(s.confirmedWhile.isEmpty)
    }

    @Test("the new image's app silent after it confirmed itself: said so")
    func silentSelfConfirmed() async throws {
        let halo = try Self.halo {
            $0.silentNextImage = true
            $0.selfConfirm = true
        }
        let error = await Self.failure {
            _ = try await MCUmgrUpdater().apply(try Self.image(), Self.context(halo, RecordedJob(), restart: .milliseconds(300)))
        }
        #expect(error == "The new image (firmware 0.8.8) runs and confirmed itself, but glassd's app on the glasses does not answer.")
        #expect(halo.snapshot.resets == 1)
    }

    @Test("a file that is not an MCUboot image is refused as an image before the glasses are touched")
    func refusedFile() throws {
        var bytes = try MCUbootImageTests.fixture("signed.bin")
        bytes[600] ^= 0xFF
        #expect(throws: UpdateRefusal.self) { _ = try MCUmgrUpdater().prepare(bytes, version: nil, pinned: nil) }
        do {
            _ = try MCUmgrUpdater().prepare(Array("PK zip".utf8), version: nil, pinned: nil)
        } catch {
            #expect(error.reason == .image)
            #expect(error.message.hasPrefix("The firmware image is not a usable MCUboot image"))
        }
    }
}
