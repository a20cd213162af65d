// SPDX-License-Identifier: GPL-2.0-or-later
import Concurrency
import Glasses
import LinkKit
import Logging
import Testing

/// The paired glasses' link as the wait after a reset sees it: a drop it asks for brings the
/// glasses back on the next link, ready.
private actor DroppingLink: BootloaderLink {
    let statuses: Watched<SessionStatus>
    private(set) var drops: [String] = []

    init(statuses: Watched<SessionStatus>) { self.statuses = statuses }

    func suspend() {}
    func resume() {}
    func withBootloader<T: Sendable>(
        timeout: Duration, connectWindow: Duration, _ body: @escaping @Sendable (any GlassesLink) async throws -> T
    ) async throws -> T {
        throw LinkError.notFound("no bootloader")
    }

    func dropLink(reason: String) {
        drops.append(reason)
        statuses.set(BackAfterResetTests.ready(generation: statuses.current.generation + 1, fpga: "new"))
    }
}

private final class NoProgress: UpdateProgress {
    func enter(_ phase: UpdatePhase) throws {}
    func progress(_ phase: UpdatePhase, _ fraction: Double) {}
}

@Suite("The glasses back after a reset", .timeLimit(.minutes(1)))
struct BackAfterResetTests {
    static func ready(generation: UInt64, fpga: String) -> SessionStatus {
        SessionStatus(
            state: .ready, info: DeviceInfo(versions: ["fpga": fpga], battery: 90, runningScripts: "s", storedScripts: "s"),
            generation: generation)
    }

    /// The wait with no time for the link to drop by itself: what it finds then decides.
    private func back(_ statuses: Watched<SessionStatus>, _ link: DroppingLink) async throws -> DeviceInfo? {
        var settings = UpdateSettings(restartTimeout: .seconds(30))
        settings.resetDropTimeout = .zero
        let context = UpdateContext(
            session: 0, link: link, statuses: statuses, settings: settings, job: NoProgress(), logger: Logger(label: "test"),
            recovered: {})
        return try await context.backAsThemselves(after: 7)
    }

    @Test("the link the update used still up and updating after the reset: glassd drops it, and the glasses on the next link come back")
    func stillUp() async throws {
        let statuses = Watched(SessionStatus(state: .updating, generation: 7))
        let link = DroppingLink(statuses: statuses)
        let info = try await back(statuses, link)
        #expect(info?.version(of: "fpga") == "new")
        #expect(await link.drops == ["the link did not drop after the glasses' reset"])
        #expect(statuses.current.generation == 8)
    }

    @Test("a link that dropped by itself, or glasses already back, are left alone")
    func droppedByItself() async throws {
        let statuses = Watched(SessionStatus(state: .disconnected, generation: 7))
        let link = DroppingLink(statuses: statuses)
        async let info = back(statuses, link)
        // Back before the moment the link would be dropped or after it: no drop either way.
        statuses.set(Self.ready(generation: 8, fpga: "own"))
        #expect(try await info?.version(of: "fpga") == "own")
        #expect(await link.drops.isEmpty)

        let already = Watched(Self.ready(generation: 9, fpga: "back"))
        let quiet = DroppingLink(statuses: already)
        #expect(try await back(already, quiet)?.version(of: "fpga") == "back")
        #expect(await quiet.drops.isEmpty)
    }
}
