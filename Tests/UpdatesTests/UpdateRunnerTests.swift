// SPDX-License-Identifier: GPL-2.0-or-later
import Concurrency
import Firmware
import Glasses
import LinkKit
import Logging
import Synchronization
import Testing
import TestSupport
@testable import Updates

/// The paired glasses' link for an update, in memory: the bootloader is a FakeBootloader, and a
/// finished transfer "boots" glasses that come back ready with `bootsVersion`.
private actor FakeBootloaderLink: BootloaderLink {
    let bootloader: FakeBootloader
    let statuses: Watched<SessionStatus>
    let bootsVersion: String
    /// The next n bootloader searches find nothing, or every one, as LinkError `failure` says.
    var failures: [LinkError]
    private(set) var suspended = 0
    private(set) var resumed = 0
    private(set) var connections = 0

    init(bootloader: FakeBootloader, statuses: Watched<SessionStatus>, bootsVersion: String, failures: [LinkError] = []) {
        self.bootloader = bootloader
        self.statuses = statuses
        self.bootsVersion = bootsVersion
        self.failures = failures
    }

    func suspend() { suspended += 1 }
    func resume() { resumed += 1 }
    func dropLink(reason: String) {}

    func withBootloader<T: Sendable>(
        timeout: Duration, connectWindow: Duration, _ body: @escaping @Sendable (any GlassesLink) async throws -> T
    ) async throws -> T {
        if !failures.isEmpty { throw failures.removeFirst() }
        connections += 1
        let (control, packet) = bootloader.connect()
        let value = try await body(DFULink(control: control, packet: packet))
        // The bootloader boots the new image: the glasses come back on a new link, ready.
        let back = statuses.current.generation + 1
        statuses.set(
            SessionStatus(
                state: .ready,
                info: DeviceInfo(versions: ["firmware": bootsVersion], battery: 90, runningScripts: "s", storedScripts: "s"),
                generation: back))
        return value
    }
}

private struct DFULink: GlassesLink {
    let control: FakeBootloader.Channel
    let packet: FakeBootloader.Channel
    var profile: GATTProfile { .nordicDFU }
    func channel(_ name: String) -> (any ByteChannel)? {
        name == DFUChannel.control ? control : name == DFUChannel.packet ? packet : nil
    }
}

/// Glasses that go to their bootloader when told (the link drops; nothing else to do here).
private final class FakeEntry: BootloaderEntry {
    let entered = Mutex(0)
    func enterBootloader() async throws { entered.withLock { $0 += 1 } }
}

private final class RecordedProgress: UpdateProgress {
    let phases = Mutex<[UpdatePhase]>([])
    func enter(_ phase: UpdatePhase) throws { phases.withLock { $0.append(phase) } }
    func progress(_ phase: UpdatePhase, _ fraction: Double) {}
}

@Suite("The update runner, in memory", .timeLimit(.minutes(5)))
struct UpdateRunnerTests {
    private static let image = (0..<20_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }

    private func runner(_ link: FakeBootloaderLink, _ entry: FakeEntry, _ statuses: Watched<SessionStatus>, _ job: RecordedProgress)
        -> UpdateRunner
    {
        var settings = UpdateSettings()
        settings.attempts = 3
        let context = UpdateContext(
            session: entry, link: link, statuses: statuses, settings: settings, job: job, logger: Logger(label: "test"), recovered: {})
        return UpdateRunner(updaters: [NordicDFUUpdater()], context: context)
    }

    private func images(version: String) throws -> UpdateImages {
        UpdateImages([try NordicDFUUpdater().prepare(try TestPackages.package(Self.image), version: version, pinned: nil)])
    }

    private static let firmware = UpdatePlan(["firmware"])

    private static func readyGlasses() -> Watched<SessionStatus> {
        Watched(
            SessionStatus(
                state: .ready,
                info: DeviceInfo(versions: ["firmware": "v1"], battery: 90, runningScripts: "s", storedScripts: "s"),
                generation: 1))
    }

    @Test("firmware: the glasses sent to their bootloader once, a drop in the middle resumed from what it holds, back with the new version")
    func dropResumed() async throws {
        let bootloader = FakeBootloader()
        // The link goes once the first data object is executed.
        bootloader.with { $0.dropWhen = { $0.executed == FakeBootloader.dataMaxSize } }
        let statuses = Self.readyGlasses()
        let link = FakeBootloaderLink(bootloader: bootloader, statuses: statuses, bootsVersion: "v2")
        let entry = FakeEntry()
        let job = RecordedProgress()
        let info = try await runner(link, entry, statuses, job).run(try images(version: "v2"), plan: Self.firmware)
        #expect(info?.firmwareVersion == "v2")
        #expect(entry.entered.withLock { $0 } == 1)
        #expect(await link.connections == 2, "the second connection resumed the transfer")
        #expect(bootloader.with { $0.flash } == Self.image)
        // Suspended for each connection (the supervisor's suspend is idempotent), resumed once the
        // glasses run their application again.
        #expect(await link.suspended == 2)
        #expect(await link.resumed == 1, "supervision is taken up again")
        let phases = job.phases.withLock { $0 }
        #expect(phases.first == NordicDFUUpdater.enteringDFU)
        #expect(phases.contains(NordicDFUUpdater.flashingFirmware) && phases.last == .restarting, "\(phases)")
    }

    @Test("a bootloader that takes no connection: the job fails saying the glasses are left in their bootloader, and supervision goes on")
    func unreachable() async throws {
        let statuses = Self.readyGlasses()
        let link = FakeBootloaderLink(
            bootloader: FakeBootloader(), statuses: statuses, bootsVersion: "v2",
            failures: [.unreachable("Could not reach the glasses' bootloader (le-connection-abort-by-local).")])
        await #expect(throws: UpdateFailure.self) {
            do {
                _ = try await runner(link, FakeEntry(), statuses, RecordedProgress())
                    .run(try images(version: "v2"), plan: Self.firmware)
            } catch let failure as UpdateFailure {
                #expect(failure.description.contains("left in their bootloader"), "\(failure)")
                throw failure
            }
        }
        let (suspended, resumed) = (await link.suspended, await link.resumed)
        #expect(suspended >= 1 && resumed == suspended)
    }

    @Test("glasses that come back with another version than pinned fail the job, saying what runs")
    func wrongVersion() async throws {
        let statuses = Self.readyGlasses()
        let link = FakeBootloaderLink(bootloader: FakeBootloader(), statuses: statuses, bootsVersion: "v1")
        await #expect(throws: UpdateFailure.self) {
            do {
                _ = try await runner(link, FakeEntry(), statuses, RecordedProgress())
                    .run(try images(version: "v2"), plan: Self.firmware)
            } catch let failure as UpdateFailure {
                #expect(failure.description == "The glasses run firmware v1 after the update, not v2.")
                throw failure
            }
        }
    }
}
