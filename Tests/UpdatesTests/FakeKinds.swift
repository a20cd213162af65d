// SPDX-License-Identifier: GPL-2.0-or-later
import Concurrency
import Foundation
import Glasses
import LinkKit
import Logging
import Synchronization
@testable import Updates

/// A kind of glasses the engine has never heard of, with one updatable component ("arm") that
/// has phases of its own: what a new kind brings, and all it brings.
struct ArmUpdater: ComponentUpdater {
    static let pushing = UpdatePhase("pushing-arm", cancelRefusal: "The arm is rewriting itself.")
    let component = "arm"
    let label = "arm"
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
actor IdleSession: GlassesSession {
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

func twin(boots: String? = nil) -> GlassesKind {
    GlassesKind(
        names: [GlassesKindName("twin")], title: "a pair of twins", advertisedService: "0000fe00-0000-1000-8000-00805f9b34fb",
        profile: GATTProfile(name: "twin", channels: []), bonds: false, updaters: [ArmUpdater(boots: boots)],
        makeSession: { _ in IdleSession() }, identify: { _ in nil })
}

final class Recorded: UpdateProgress {
    let phases = Mutex<[UpdatePhase]>([])
    func enter(_ phase: UpdatePhase) throws { phases.withLock { $0.append(phase) } }
    func progress(_ phase: UpdatePhase, _ fraction: Double) {}
}

/// Glasses without a bootloader to reach: the arm updater never asks for one.
struct NoBootloader: BootloaderLink {
    func suspend() async {}
    func resume() async {}
    func withBootloader<T: Sendable>(
        timeout: Duration, connectWindow: Duration, _ body: @escaping @Sendable (any GlassesLink) async throws -> T
    ) async throws -> T {
        throw LinkError.notFound("no bootloader")
    }
}

extension ComponentImage {
    static func sha256(_ bytes: [UInt8]) -> String {
        (try? sha256(bytes, of: "test", pinned: nil)) ?? ""
    }
}

/// A one-radio kind whose only component is its firmware, which can be finished from a
/// bootloader (as a Nordic DFU firmware can): only what admission asks of it is real.
struct BootUpdater: ComponentUpdater {
    let component = "firmware"
    let label = "firmware"
    var recovers: Bool { true }

    func prepare(_ file: [UInt8], version: String?, pinned sha256: String?) throws(UpdateRefusal) -> ComponentImage {
        ComponentImage(component: component, file: file, version: version, sha256: try ComponentImage.sha256(file, of: "firmware", pinned: sha256), payload: file)
    }

    func phases(_ image: ComponentImage) -> [(UpdatePhase, Double)] { [(.restarting, 1)] }

    func apply(_ image: ComponentImage, _ context: UpdateContext) async throws -> DeviceInfo? {
        throw UpdateFailure("not in these tests")
    }
}

func solo() -> GlassesKind {
    GlassesKind(
        names: [GlassesKindName("solo")], title: "a solo", advertisedService: "0000fe01-0000-1000-8000-00805f9b34fb",
        profile: GATTProfile(name: "solo", channels: []), bonds: false, updaters: [BootUpdater()],
        makeSession: { _ in IdleSession() }, identify: { _ in nil })
}
