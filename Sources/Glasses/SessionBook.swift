// SPDX-License-Identifier: GPL-2.0-or-later
import Concurrency
import Logging

/// What every session keeps of where it stands, whatever the glasses: the status of the current
/// link's generation (updates about an older one are dropped), published to subscribers on every
/// change; the answer on its way (one at a time); the scene frame asked for; and what the glasses
/// send that is dropped, logged once per kind, then rarely. Owned by the session actor.
public struct SessionBook<C: Clock> where C.Duration == Duration {
    public private(set) var status = SessionStatus(state: .disconnected)
    /// The answer on its way to the glasses: one at a time, and a cancel tap stops it.
    public private(set) var answer: AnswerStream?
    /// When the scene frame on its way was asked for, until it ends.
    public var sceneFrameAsked: C.Instant?
    /// Where status changes and events go (the session's `subscribe()` hands out its streams).
    let sink: Broadcast<SessionEvent>
    let clock: C
    let logger: Logger
    private var dropped: LogThrottle<C>

    public init(sink: Broadcast<SessionEvent>, clock: C, logger: Logger) {
        self.sink = sink
        self.clock = clock
        self.logger = logger
        dropped = LogThrottle(clock: clock)
    }

    public var generation: UInt64 { status.generation }

    /// A scene frame not ended this long after it was asked for is given up.
    public static var sceneFrameLimit: Duration { .seconds(10) }

    /// A new link's generation: `connecting` until its handshake starts.
    public mutating func begin(_ generation: UInt64) {
        answer = nil
        sceneFrameAsked = nil
        status.generation = generation
        status.state = .connecting
        sink.publish(.status(status))
    }

    /// The link of `generation` ended (false: an older one): nothing is on its way any more, and
    /// the glasses are disconnected unless the session gave up on them.
    @discardableResult
    public mutating func ended(_ generation: UInt64) -> Bool {
        guard generation == status.generation else { return false }
        sceneFrameAsked = nil
        answer = nil
        if status.state != .error { set(.disconnected, for: generation) }
        return true
    }

    public mutating func set(_ state: SessionState, reason: String? = nil, for generation: UInt64) {
        guard generation == status.generation else { return }
        var next = status
        next.state = state
        if let reason { next.reason = reason }
        guard next != status else { return }
        status = next
        logger.info("session \(state.rawValue)", metadata: reason.map { ["reason": "\($0)"] } ?? [:])
        sink.publish(.status(status))
    }

    public mutating func setInfo(_ info: DeviceInfo, for generation: UInt64) {
        guard generation == status.generation, status.info != info else { return }
        status.info = info
        sink.publish(.status(status))
    }

    public mutating func setBattery(_ level: UInt8) {
        guard var info = status.info else { return }
        info.battery = level
        setInfo(info, for: status.generation)
    }

    public mutating func setCharging(_ charging: Bool) {
        guard var info = status.info else { return }
        info.charging = charging
        setInfo(info, for: status.generation)
    }

    /// Hands what the wearer did to the subscribers.
    public func publish(_ event: GlassesEvent) { sink.publish(.glasses(event)) }

    /// Logs a dropped input of `kind` unless one of its kind was logged lately.
    public mutating func logDropped(_ kind: String, _ detail: @autoclosure () -> String) {
        guard let unsaid = dropped.admit(kind) else { return }
        logger.notice("\(detail())", metadata: unsaid > 0 ? ["not_logged_since": "\(unsaid)"] : [:])
    }

    /// Whether a line of `kind` may be logged now (nil: not; else how many went unsaid since).
    public mutating func admit(_ kind: String) -> Int? { dropped.admit(kind) }

    /// Whether requests may be written to the glasses now; throws `SessionError.notConnected` if not.
    public func checkReady() throws {
        guard status.state == .ready || status.state == .busy else {
            throw SessionError.notConnected("The glasses are not ready (\(status.state.rawValue)).")
        }
    }

    /// Takes `stream` as the answer being shown (an earlier one is cancelled). With `claim` (an
    /// answer the glasses did not ask for) only idle glasses take it, and they are busy until it
    /// is finished; throws `SessionError.busy` otherwise.
    public mutating func begin(answer stream: AnswerStream, claim: Bool) throws {
        if claim {
            guard status.state == .ready else { throw SessionError.busy }
            set(.busy, for: status.generation)
        }
        answer?.cancel()
        answer = stream
    }

    /// An answer (shown through `stream`, if any) ended: the glasses are ready for the next
    /// question, unless a newer answer has taken them since.
    public mutating func answerFinished(_ stream: AnswerStream?) {
        if let stream {
            guard stream === answer else { return }
            answer = nil
        }
        if status.state == .busy { set(.ready, for: status.generation) }
    }

    /// The wearer cancelled the answer with a tap.
    public mutating func cancelled() {
        answer?.cancel()
        answer = nil
        if status.state == .busy { set(.ready, for: status.generation) }
        publish(.cancelled)
    }

    /// Before a scene frame is asked for: gives up one the glasses never ended (true), so they
    /// are free again; then throws `SessionError.busy` while they capture or answer.
    public mutating func readyForSceneFrame() throws -> Bool {
        var gaveUp = false
        if status.state == .busy, answer == nil, let asked = sceneFrameAsked, asked.duration(to: clock.now) > Self.sceneFrameLimit {
            logDropped("unfinished scene frame", "a scene frame the glasses never ended given up")
            sceneFrameAsked = nil
            set(.ready, for: status.generation)
            gaveUp = true
        }
        guard status.state != .busy else { throw SessionError.busy }
        return gaveUp
    }

    /// The scene frame asked for ended: the glasses are free again, unless answering.
    public mutating func sceneFrameEnded() {
        sceneFrameAsked = nil
        if status.state == .busy && answer == nil { set(.ready, for: status.generation) }
    }

    /// A question takes over the glasses: a scene frame on its way is given up, and they are busy.
    public mutating func questionStarted() {
        sceneFrameAsked = nil
        if status.state == .ready { set(.busy, for: status.generation) }
    }
}

extension AnswerStream {
    /// Maps an answer's pieces onto the messages of a kind of glasses.
    public static func pieces<M: Sendable>(
        heading: @escaping @Sendable (String) -> M, text: @escaping @Sendable (String) -> M,
        error: @escaping @Sendable (String) -> M, end: M, _ write: @escaping @Sendable (M) async throws -> Void
    ) -> @Sendable (Piece) async throws -> Void {
        { piece in
            switch piece {
            case .heading(let s): try await write(heading(s))
            case .text(let s): try await write(text(s))
            case .error(let s): try await write(error(s))
            case .end: try await write(end)
            }
        }
    }
}
