// SPDX-License-Identifier: GPL-2.0-or-later
import Concurrency
import Foundation
import Glasses
import LinkKit
import Logging

/// A kind of glasses glassd has never heard of, made the way Even Realities G1 are: one radio per
/// arm, each advertising the Nordic UART service under a name that says which pair and which arm
/// ("Twin_7_L", "Twin_7_R"). It has one updatable component ("arm") with phases of its own. It
/// is what a new kind brings, and all it brings: no file outside this target names it.
public func twin(boots: String? = nil) -> GlassesKind {
    GlassesKind(
        names: [.twin], title: "a pair of twins", advertisedService: TwinUUID.uart, profile: .twin, bonds: false,
        updaters: [ArmUpdater(boots: boots)], makeSession: { _ in IdleSession() }, radios: ["left", "right"],
        radioOf: twinRadio(of:)
    ) { sighting in
        twinRadio(of: sighting) != nil ? .twin : nil
    }
}

extension GlassesKindName {
    public static let twin = GlassesKindName("twin")
}

/// The Nordic UART service each arm offers (the test world's virtual peripherals carry it).
public enum TwinUUID {
    public static let uart = "6e400001-b5a3-f393-e0a9-e50e24dcca9e"
    public static let rx = "6e400002-b5a3-f393-e0a9-e50e24dcca9e"
    public static let tx = "6e400003-b5a3-f393-e0a9-e50e24dcca9e"
}

extension GATTProfile {
    /// One byte stream per arm.
    public static let twin = GATTProfile(
        name: "twin", channels: [Channel(name: "uart", service: TwinUUID.uart, write: TwinUUID.rx, notify: TwinUUID.tx, framing: .stream)])
}

/// "Twin_<pair>_L" is the left arm of pair <pair>; "_R" the right.
private func twinRadio(of sighting: Sighting) -> (pair: String, role: String)? {
    let parts = sighting.name?.split(separator: "_") ?? []
    guard parts.count == 3, parts[0] == "Twin", !parts[1].isEmpty else { return nil }
    switch parts[2] {
    case "L": return (String(parts[1]), "left")
    case "R": return (String(parts[1]), "right")
    default: return nil
    }
}

/// The twin's one component, with a phase of its own.
public struct ArmUpdater: ComponentUpdater {
    public static let pushing = UpdatePhase("pushing-arm", cancelRefusal: "The arm is rewriting itself.")
    public let component = "arm"
    public let label = "arm"
    /// What the arm boots after a push: the image's version, or this one instead.
    let boots: String?

    public init(boots: String? = nil) { self.boots = boots }

    public func prepare(_ file: [UInt8], version: String?, pinned sha256: String?) throws(UpdateRefusal) -> ComponentImage {
        guard file.first == 0xA7 else { throw .image("Not an arm image.") }
        let digest = try ComponentImage.sha256(file, of: "arm image", pinned: sha256)
        return ComponentImage(component: component, file: file, version: version, sha256: digest, payload: Array(file.dropFirst()))
    }

    public func phases(_ image: ComponentImage) -> [(UpdatePhase, Double)] { [(Self.pushing, 4), (.restarting, 1)] }

    public func apply(_ image: ComponentImage, _ context: UpdateContext) async throws -> DeviceInfo? {
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

/// A session that serves nothing: these tests drive the link and the update engine, not a session.
public actor IdleSession: GlassesSession {
    public init() {}
    public nonisolated func subscribe() -> AsyncStream<SessionEvent> { AsyncStream { $0.finish() } }
    public var current: SessionStatus { SessionStatus(state: .disconnected) }
    public func run(links: AsyncStream<LinkEvent>, restart: @escaping @Sendable (String) async -> Void) async {}
    public func display(_ text: String) async throws { throw SessionError.unsupported("idle") }
    public func answerStream(claim: Bool) async throws -> AnswerStream { throw SessionError.unsupported("idle") }
    public func answerFinished(_ stream: AnswerStream?) async {}
    public func stopRecording() async throws { throw SessionError.unsupported("idle") }
    public func requestSceneFrame() async throws { throw SessionError.unsupported("idle") }
    public func showAlert(_ text: String?) async throws { throw SessionError.unsupported("idle") }
    public func pageLayout() -> AnswerLayout { AnswerLayout(columns: 20, lines: 4) }
}
