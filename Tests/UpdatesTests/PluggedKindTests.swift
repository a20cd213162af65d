// SPDX-License-Identifier: GPL-2.0-or-later
import Concurrency
import FakeKinds
import Foundation
import Glasses
import Logging
import Synchronization
import Testing
@testable import Updates

@Suite("A kind the engine does not know, plugged in", .timeLimit(.minutes(2)))
struct PluggedKindTests {
    static let image: [UInt8] = [0xA7, 1, 2, 3]

    private func manifest(_ text: String) throws -> String {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("glassd-twin-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try Data(Self.image).write(to: URL(fileURLWithPath: directory + "/arm.bin"))
        try text.write(toFile: directory + "/" + FirmwareManifest.fileName, atomically: true, encoding: .utf8)
        return directory
    }

    @Test("its manifest names its kind and component; its updater checks the file; a component it lacks is refused by name")
    func manifest() throws {
        let kind = twin()
        let sha = ComponentImage.sha256(Self.image)
        let directory = try manifest("kind = \"twin\"\n[arm]\nfile = \"arm.bin\"\nversion = \"a2\"\nsha256 = \"\(sha)\"\n")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let images = try UpdateImages.fromManifest(in: directory, kinds: [kind])
        #expect(images.kind == GlassesKindName("twin"))
        #expect(images.ordered.map(\.component) == ["arm"])
        #expect(images["arm"]?.payload as? [UInt8] == [1, 2, 3], "prepared by the kind's own updater")

        let wrong = try manifest("kind = \"twin\"\n[firmware]\nfile = \"arm.bin\"\nversion = \"a2\"\nsha256 = \"\(sha)\"\n")
        defer { try? FileManager.default.removeItem(atPath: wrong) }
        #expect(throws: UpdateRefusal.image("\(wrong)/manifest.toml: [firmware] is no component glassd updates.")) {
            try UpdateImages.fromManifest(in: wrong, kinds: [kind])
        }
        #expect(throws: UpdateRefusal.self) { try ArmUpdater(boots: nil).prepare([0, 1], version: nil, pinned: nil) }
        #expect(throws: UpdateRefusal.self) { try ArmUpdater(boots: nil).prepare(Self.image, version: nil, pinned: String(repeating: "0", count: 64)) }
    }

    @Test("planned, run with its own phases on one bar, and proven done by the version it reports; another version fails the step")
    func run() async throws {
        let kind = twin()
        let images = UpdateImages([try ArmUpdater(boots: nil).prepare(Self.image, version: "a2", pinned: nil)])
        let device = DeviceInfo(versions: ["arm": "a1"], battery: 50, runningScripts: nil, storedScripts: nil)
        let plan = UpdatePlan.make(images, device: device, force: false)
        #expect(plan == UpdatePlan(["arm"]))
        #expect(UpdatePlan.outdated(images, device: device, kind: kind) == "Update available: arm a1 → a2.")
        #expect(UpdatePlan.versions(device, kind: kind) == "arm a1")
        var bar = UpdateRunner.progressBar(images, plan, updaters: kind.updaters)
        #expect(bar.phases.map(\.phase) == [.checking, ArmUpdater.pushing, .restarting, .uploadingScripts])
        #expect(bar.advance(ArmUpdater.pushing, 1) > 50)

        let statuses = Watched(SessionStatus(state: .ready, info: device, generation: 1))
        let job = Recorded()
        let context = UpdateContext(
            session: IdleSession(), link: NoBootloader(), statuses: statuses, settings: UpdateSettings(), job: job,
            logger: Logger(label: "test"), recovered: {})
        let after = try await UpdateRunner(updaters: kind.updaters, context: context).run(images, plan: plan)
        #expect(after?.version(of: "arm") == "a2")
        #expect(job.phases.withLock { $0 } == [ArmUpdater.pushing, .restarting])

        let stuck = twin(boots: "a1")
        let again = UpdateContext(
            session: IdleSession(), link: NoBootloader(), statuses: statuses, settings: UpdateSettings(), job: Recorded(),
            logger: Logger(label: "test"), recovered: {})
        await #expect(throws: UpdateFailure.self) {
            do {
                _ = try await UpdateRunner(updaters: stuck.updaters, context: again).run(images, plan: plan)
            } catch let failure as UpdateFailure {
                #expect(failure.description == "The glasses run arm a1 after the update, not a2.")
                throw failure
            }
        }
    }
}
