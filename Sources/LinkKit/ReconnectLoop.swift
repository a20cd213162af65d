// SPDX-License-Identifier: GPL-2.0-or-later
import Concurrency

/// What the reconnect loop needs from the Bluetooth stack: BlueZ in glassd, a fake in tests.
public protocol LinkRadio: Sendable {
    associatedtype Connection: Sendable

    /// Returns once a usable adapter is there (at once if it is); waits through power cycles and
    /// bluetoothd restarts.
    func adapterReady() async throws
    /// One connection attempt; throws when the glasses are not there or refuse.
    func connect(_ address: BluetoothAddress) async throws -> Connection
    /// Returns once the glasses are seen advertising, watching (discovery) meanwhile; at once if
    /// they are in sight now.
    func seen(_ address: BluetoothAddress) async throws
}

/// How the loop paces its attempts.
public struct ReconnectPolicy: Sendable {
    /// At most one attempt per `floor`, so glasses that drop straight after every connect cannot
    /// make glassd spin.
    public var floor: Duration
    /// Pacing of attempts that fail although the glasses are in sight (they refuse): the n-th
    /// failure in a row waits doubling from `floor` up to `maximum` (the first only the floor).
    public var maximum: Duration
    /// While watching, try anyway this often, in case an advertisement went unnoticed.
    public var rewatch: Duration

    public init(floor: Duration = .seconds(1), maximum: Duration = .seconds(60), rewatch: Duration = .seconds(30)) {
        self.floor = floor
        self.maximum = maximum
        self.rewatch = rewatch
    }

    /// The wait before the next attempt after `failures` failed ones in a row (the floor aside).
    public func pause(afterFailures failures: Int) -> Duration {
        failures < 2 ? .zero : Duration.doubling(floor, attempt: failures - 2, cap: maximum)
    }
}

/// How a link that came up ended.
public enum LinkEnd: Sendable, Equatable {
    /// It dropped: reconnect at once.
    case dropped(String)
    /// What ran on it gave up (the session failed): paced like a failed attempt.
    case rejected(String)
}

/// Keeps one pair of glasses connected: a link that came up is a success, so after it drops the
/// next attempt starts at once (the floor aside); an attempt that fails means the glasses are away
/// or refuse, so the loop watches for them and tries again as soon as they are seen, pacing only
/// repeated failures. Pure: a radio and a clock are all it needs.
public struct ReconnectLoop<Radio: LinkRadio, C: Clock>: Sendable where C.Duration == Duration {
    /// What the loop is doing, for the D-Bus side.
    public enum Step: Sendable, Equatable {
        /// Watching for the glasses: not seen since the last failure.
        case waiting
        /// Attempting a connection; `reconnect`: they were connected before.
        case connecting(reconnect: Bool)
        /// An attempt failed (the error, as text).
        case failed(String)
    }

    public let radio: Radio
    public let clock: C
    public let policy: ReconnectPolicy

    public init(radio: Radio, clock: C, policy: ReconnectPolicy = ReconnectPolicy()) {
        self.radio = radio
        self.clock = clock
        self.policy = policy
    }

    /// Runs until cancelled, or until `connected` returns nil (stop). `connected` holds each link
    /// until it ends and says how.
    public func run(
        _ address: BluetoothAddress, observe: @Sendable (Step) async -> Void,
        connected: @Sendable (Radio.Connection) async -> LinkEnd?
    ) async {
        var failures = 0
        var lastAttempt: C.Instant?
        var everConnected = false
        while !Task.isCancelled {
            do {
                try await radio.adapterReady()
                // The pause comes first, so glasses that were away longer than it are tried the
                // moment they are seen.
                try await clock.sleep(for: policy.pause(afterFailures: failures))
                if failures > 0 {
                    await observe(.waiting)
                    try await watch(address)
                }
                if let lastAttempt { try await clock.sleep(until: lastAttempt.advanced(by: policy.floor), tolerance: nil) }
                lastAttempt = clock.now
                await observe(.connecting(reconnect: everConnected))
                let connection = try await radio.connect(address)
                failures = 0
                everConnected = true
                switch await connected(connection) {
                case nil: return
                case .dropped: continue
                case .rejected(let reason):
                    failures += 1
                    await observe(.failed(reason))
                }
            } catch {
                if Task.isCancelled || error is CancellationError { return }
                failures += 1
                await observe(.failed("\(error)"))
            }
        }
    }

    /// Until the glasses are seen, or `rewatch` passes (an advertisement may go unnoticed).
    private func watch(_ address: BluetoothAddress) async throws {
        let radio = self.radio
        let clock = self.clock
        let rewatch = policy.rewatch
        do {
            try await withDeadline(after: rewatch, on: clock) {
                try await radio.seen(address)
                try Task.checkCancellation()
            }
        } catch is DeadlinePassed {
            return
        }
    }
}
