// SPDX-License-Identifier: GPL-2.0-or-later
import LinkKit

/// Why a request to the glasses was refused.
public enum SessionError: Error, Sendable, Equatable {
    case notConnected(String)
    /// The glasses are capturing or showing another answer.
    case busy
    /// These glasses (or their scripts) cannot do what was asked.
    case unsupported(String)
}

/// A pair of glasses as the product sees it, whatever their kind: it serves the links the
/// supervisor brings up (handshake, glassd's code on the device, then messages), reports what the
/// wearer does, and shows what the product says.
public protocol GlassesSession: Sendable {
    /// Every status change (none coalesced) and event from now on, in order; each caller gets
    /// its own stream.
    func subscribe() -> AsyncStream<SessionEvent>
    var current: SessionStatus { get async }
    /// Serves each link that comes up until it goes down; `restart` drops the link after the
    /// session gave up, so the supervisor tries again on its backoff.
    func run(links: AsyncStream<LinkEvent>, restart: @escaping @Sendable (String) async -> Void) async
    /// Clears the answer area and shows `text`.
    func display(_ text: String) async throws
    /// A stream for an answer to the glasses on the current link. With `claim` (an answer the
    /// glasses did not ask for), only when they are idle, and they are busy until
    /// `answerFinished(_:)`. Throws `SessionError.notConnected`, or `.busy` when a claim finds them busy.
    func answerStream(claim: Bool) async throws -> AnswerStream
    /// Marks the end of an answer (shown through `stream`, if any): the glasses are ready for
    /// the next question, unless a newer answer has taken them since.
    func answerFinished(_ stream: AnswerStream?) async
    /// Tells the glasses to stop recording now (the host heard the end of speech).
    func stopRecording() async throws
    /// Scene mode: asks idle glasses for a photo, which comes as `.sceneFrame`. Throws
    /// `SessionError.busy` while they capture or answer, `.notConnected` when they are not ready.
    func requestSceneFrame() async throws
    /// Shows a hazard warning on the glasses, or clears it (`nil`).
    func showAlert(_ text: String?) async throws
    /// Shows a laid-out answer's pages (AnswerPages): the first now, the next on each tap; after
    /// the last the glasses are ready for a question again.
    func showPages(_ pages: [String]) async throws
    /// The pages' size on this kind's display.
    func pageLayout() async -> AnswerLayout
    /// The wake phrase from the glasses' microphone: while on, idle glasses stream what they hear
    /// as `.listening` events (they pause while a question records, a photo is taken or an answer
    /// shows). Asked again on each link: glasses start deaf.
    func setListening(_ on: Bool) async throws
    /// Starts a question as a tap would (the wake phrase was heard), the display saying `heard`.
    /// Throws `SessionError.busy` unless the glasses are idle, `.notConnected` when not ready.
    func startQuestion(heard: String) async throws
    /// The speaker of the glasses on the current link, ready for one answer; nil when they have
    /// none (or are not ready).
    func speaker() async -> (any GlassesSpeaker)?
    /// The wearer spoke over the answer being spoken (heard in `.overheard`): the glasses stop
    /// the speech at once and record the question, as after a tap that cuts the speech.
    func bargeIn() async throws
}

extension GlassesSession {
    /// Glasses without a speaker.
    public func speaker() async -> (any GlassesSpeaker)? { nil }

    public func bargeIn() async throws {
        throw SessionError.unsupported("These glasses cannot hear over their own speech.")
    }

    /// Glasses that cannot turn pages yet show them all, one after another (their display
    /// scrolls): nothing is left out.
    public func showPages(_ pages: [String]) async throws {
        try await display(pages.joined(separator: "\n"))
    }

    public func setListening(_ on: Bool) async throws {
        if on { throw SessionError.unsupported("These glasses cannot listen for the wake phrase.") }
    }

    public func startQuestion(heard: String) async throws {
        throw SessionError.unsupported("These glasses cannot start a question by themselves.")
    }

    public func answerStream() async throws -> AnswerStream { try await answerStream(claim: false) }
    public func answerFinished() async { await answerFinished(nil) }
}

/// Glasses that go to their bootloader for a firmware update (Monocle, Frame: Nordic Secure DFU).
public protocol BootloaderEntry: Sendable {
    /// Sends the idle glasses to their bootloader; the link drops as they reset, and the
    /// bootloader advertises at their address + 1. Throws `SessionError.busy` while a question
    /// is under way, `.notConnected` when they are not ready.
    func enterBootloader() async throws
    /// Whether the link may come back after `error` from `enterBootloader` (the command may have
    /// reached the glasses as it went): the kind's own protocol errors.
    func linkMayReturn(after error: any Error) -> Bool
}

extension BootloaderEntry {
    public func linkMayReturn(after error: any Error) -> Bool { false }
}

/// The link to the paired glasses as an update needs it: supervision paused while the glasses are
/// in their bootloader, and a connection to that bootloader (its DFU channels).
public protocol BootloaderLink: Sendable {
    /// Stops chasing the glasses' application (it is gone until the bootloader boots it).
    func suspend() async
    func resume() async
    /// Runs `body` on a link to the paired glasses' bootloader once it advertises (within
    /// `timeout`), trying to connect for up to `connectWindow`.
    func withBootloader<T: Sendable>(
        timeout: Duration, connectWindow: Duration, _ body: @escaping @Sendable (any GlassesLink) async throws -> T
    ) async throws -> T
    /// Drops the link to the glasses' application; supervision connects again.
    func dropLink(reason: String) async
}

extension GlassesSession {
    /// Ends a wait for an answer that none will come to (a recording nobody owns any more): the
    /// glasses get an empty answer and are ready for the next question.
    public func giveEmptyAnswer() async {
        guard let stream = try? await answerStream() else { return }
        stream.finish()
        try? await stream.run()
        await answerFinished(stream)
    }
}
