// SPDX-License-Identifier: GPL-2.0-or-later
import Concurrency
import Glasses
import LinkKit
import Logging

/// The SMP service on whichever link to the glasses is up: a client on the channel the session
/// lends, and exchanges tried again after a drop on the link that comes back.
struct SMPLink: Sendable {
    let access: any UpdateChannelAccess
    let statuses: Watched<SessionStatus>
    /// How long the glasses may take to come back after a drop (or a reset).
    let restartTimeout: Duration
    let attempts: Int
    let options: SMPClientOptions
    let logger: Logger

    /// A client on the current link's SMP channel, and that link's generation; waits (up to
    /// `restartTimeout`) for a link when none is up.
    func client() async throws -> (SMPClient<ContinuousClock>, UInt64) {
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: restartTimeout)
        while true {
            let seen = statuses.current
            if let channel = await access.updateChannel() {
                return (SMPClient(channel: channel, clock: clock, options: options), seen.generation)
            }
            if Self.linkUp(seen.state) && statuses.current == seen {
                throw UpdateFailure("The glasses offer no MCUmgr (SMP) service to update through.")
            }
            let changed = try await statuses.wait(timeout: deadline - clock.now, clock: clock) { $0 != seen }
            guard changed != nil else { throw UpdateFailure("The glasses did not come back in time (\(statuses.current.state.rawValue)).") }
        }
    }

    /// Runs `body` with a client, again on the next link after a drop or once more after a
    /// timeout, up to `attempts` times in all.
    func run<T: Sendable>(
        _ what: String, _ body: (SMPClient<ContinuousClock>) async throws -> T
    ) async throws -> T {
        var attempt = 1
        while true {
            let (client, generation) = try await client()
            do {
                return try await body(client)
            } catch {
                guard !Task.isCancelled, !(error is CancellationError), attempt < attempts, Self.mayRetry(error) else { throw error }
                logger.notice("\(what) was interrupted; trying again", metadata: ["attempt": "\(attempt)", "error": "\(error)"])
                attempt += 1
                if Self.linkWent(error) { try await newLink(after: generation) }
            }
        }
    }

    /// Waits for a link newer than `generation` (the old one's channel is gone).
    func newLink(after generation: UInt64) async throws {
        let back = try await statuses.wait(timeout: restartTimeout, clock: ContinuousClock()) { $0.generation > generation }
        guard back != nil else { throw UpdateFailure("The glasses did not come back after the link dropped.") }
    }

    static func linkUp(_ state: SessionState) -> Bool {
        switch state {
        case .handshake, .checking, .uploading, .starting, .ready, .busy, .updating: true
        case .unpaired, .disconnected, .connecting, .error: false
        }
    }

    static func mayRetry(_ error: any Error) -> Bool {
        switch error {
        case SMPClientError.linkLost, SMPClientError.timeout, SMPClientError.lostNotifications: true
        case is ChannelError, SessionError.notConnected: true
        default: false
        }
    }

    static func linkWent(_ error: any Error) -> Bool {
        switch error {
        case SMPClientError.linkLost, is ChannelError, SessionError.notConnected: true
        default: false
        }
    }
}
