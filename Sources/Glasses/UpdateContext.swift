// SPDX-License-Identifier: GPL-2.0-or-later
import Concurrency
import Logging

/// What an updater works with: the paired glasses' session (its own kind's) and link, their
/// status, the job it reports to, and the waits every kind's update needs.
public struct UpdateContext: Sendable {
    /// The session serving the paired glasses, of its kind's own type: an updater asks it for
    /// what only that kind does (entering its bootloader, lending its REPL).
    public let session: any Sendable
    public let link: any BootloaderLink
    public let statuses: Watched<SessionStatus>
    public let settings: UpdateSettings
    public let job: any UpdateProgress
    public let logger: Logger
    /// Called when the glasses run their application again after a step that `recovers`: the
    /// image kept for it may go.
    public let recovered: @Sendable () async -> Void

    public init(
        session: any Sendable, link: any BootloaderLink, statuses: Watched<SessionStatus>, settings: UpdateSettings,
        job: any UpdateProgress, logger: Logger, recovered: @escaping @Sendable () async -> Void
    ) {
        self.session = session
        self.link = link
        self.statuses = statuses
        self.settings = settings
        self.job = job
        self.logger = logger
        self.recovered = recovered
    }

    /// The glasses ready on a link newer than `generation`, their scripts uploaded on the way
    /// (the session does that on every link; shown as uploading-scripts).
    /// A link of `generation` still up and updating after `settings.resetDropTimeout` is dropped:
    /// left alone, the session would wait for its drop for ever.
    public func backAsThemselves(after generation: UInt64) async throws -> DeviceInfo? {
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: settings.restartTimeout)
        let isBack: (SessionStatus) -> Bool = { $0.generation > generation && ($0.state == .uploading || $0.state == .ready) }
        var back = try await statuses.wait(timeout: min(settings.resetDropTimeout, settings.restartTimeout), clock: clock, until: isBack)
        if back == nil {
            if statuses.current.generation == generation, statuses.current.state == .updating {
                logger.notice("the glasses' link did not drop after their reset: dropping it")
                await link.dropLink(reason: "the link did not drop after the glasses' reset")
            }
            back = try await statuses.wait(timeout: max(.zero, deadline - clock.now), clock: clock, until: isBack)
        }
        guard let back else { throw UpdateFailure("The glasses did not come back after the update.") }
        if back.state == .uploading { try job.enter(.uploadingScripts) }
        return try await ready().info
    }

    /// The glasses ready for the next step (after a drop the supervisor brings them back).
    public func ready() async throws -> SessionStatus {
        guard
            let status = try await statuses.wait(timeout: settings.restartTimeout, clock: ContinuousClock(), until: { $0.state == .ready })
        else { throw UpdateFailure("The glasses are not ready (\(statuses.current.state.rawValue)).") }
        return status
    }

    /// Runs `body` up to `settings.attempts` times while its failures are `retryable`.
    public func retrying(_ what: String, retryable: (any Error) -> Bool, _ body: () async throws -> Void) async throws {
        var attempt = 1
        while true {
            do {
                return try await body()
            } catch {
                guard !Task.isCancelled, !(error is CancellationError), attempt < settings.attempts, retryable(error) else { throw error }
                logger.notice("\(what) was interrupted; trying again", metadata: ["attempt": "\(attempt)", "error": "\(error)"])
                attempt += 1
            }
        }
    }
}
