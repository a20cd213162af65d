// SPDX-License-Identifier: GPL-2.0-or-later
import Foundation
import GlassdCore
import Glasses
import Logging
import Synchronization
import Testing
@testable import Updates

/// A kind of glasses the engine has never heard of, with one updatable component ("arm") that
/// has phases of its own: what a new kind brings, and all it brings.
private struct ArmUpdater: ComponentUpdater {
    static let pushing = UpdatePhase("pushing-arm", cancelRefusal: "The arm is rewriting itself.")
    let component = "arm"
    let label = "arm image"
    /// What the arm boots after a push: the image's version, or this one instead.
    let boots: String?

    func prepare(_ file: [UInt8], version: String?, pinned sha256: String?) throws(UpdateRefusal) -> ComponentImage {
        guard file.first == 0xA7 else { throw .image("Not an arm image.") }
        let digest = try ComponentImage.sha256(file, of: "arm image", pinned: sha256)
        return ComponentImage(component: component, file: file, version: version, sha256: digest, payload: Array(file.dropFirst()))
    }

    func phases(_ image: ComponentImage) -> [(UpdatePhase, Double)] { [(Self.pushing, 4), (.restarting, 1)] }

    func apply(_ image: ComponentImage, _ context: UpdateContext) async throws -> DeviceInfo? {
        try context.job.enter(Self.pushing)
        context.job.progress(Self.pushing, 1)
        try context.job.enter(.restarting)
        let before = context.statuses.current
        var info = before.info ?? DeviceInfo(versions: [:], battery: nil, runningScripts: nil, storedScripts: nil)
        info.versions[component] = boots ?? image.version ?? "pushed"
        context.statuses.set(SessionStatus(state: .ready, info: info, generation: before.generation + 1))
        return try await context.backAsThemselves(after: before.generation)
    }
}

/// Never run: the engine asks a kind only for its names and updaters.
private actor IdleSession: GlassesSession {
    nonisolated func subscribe() -> AsyncStream<SessionEvent> { AsyncStream { $0.finish() } }
    var current: SessionStatus { SessionStatus(state: .disconnected) }
    func run(links: AsyncStream<LinkEvent>, restart: @escaping @Sendable (String) async -> Void) async {}
    func display(_ text: String) async throws { throw SessionError.unsupported("idle") }
    func answerStream(claim: Bool) async throws -> AnswerStream { throw SessionError.unsupported("idle") }
    func answerFinished(_ stream: AnswerStream?) async {}
    func stopRecording() async throws { throw SessionError.unsupported("idle") }
    func requestSceneFrame() async throws { throw SessionError.unsupported("idle") }
    func showAlert(_ text: String?) async throws { throw SessionError.unsupported("idle") }
    func pageLayout() -> AnswerLayout { AnswerLayout(columns: 20, lines: 4) }
}

private func twin(boots: String? = nil) -> GlassesKind {
    GlassesKind(
        names: [GlassesKindName("twin")], title: "a pair of twins", advertisedService: "0000fe00-0000-1000-8000-00805f9b34fb",
        profile: GATTProfile(name: "twin", channels: []), bonds: false, updaters: [ArmUpdater(boots: boots)],
        makeSession: { _ in IdleSession() }, identify: { _ in nil })
}

private final class Recorded: UpdateProgress {
    let phases = Mutex<[UpdatePhase]>([])
    func enter(_ phase: UpdatePhase) throws { phases.withLock { $0.append(phase) } }
    func progress(_ phase: UpdatePhase, _ fraction: Double) {}
}

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
        #expect(UpdatePlan.outdated(images, device: device, kind: kind) == "Update available: arm image a1 → a2.")
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
                #expect(failure.description == "The glasses run arm image a1 after the update, not a2.")
                throw failure
            }
        }
    }
}

/// Glasses without a bootloader to reach: the arm updater never asks for one.
private struct NoBootloader: BootloaderLink {
    func suspend() async {}
    func resume() async {}
    func withBootloader<T: Sendable>(
        timeout: Duration, connectWindow: Duration, _ body: @escaping @Sendable (any GlassesLink) async throws -> T
    ) async throws -> T {
        throw LinkError.notFound("no bootloader")
    }
}

extension ComponentImage {
    fileprivate static func sha256(_ bytes: [UInt8]) -> String {
        (try? sha256(bytes, of: "test", pinned: nil)) ?? ""
    }
}
