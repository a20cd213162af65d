// SPDX-License-Identifier: GPL-2.0-or-later
import Glasses
import LinkKit

/// The desk as the session the rest of glassd talks to: what writes on the display is the
/// desk's to order; everything else goes to the glasses unchanged.
extension DisplayDesk: GlassesSession {
    public nonisolated func subscribe() -> AsyncStream<SessionEvent> { inner.subscribe() }

    public var current: SessionStatus { get async { await inner.current } }

    public nonisolated func run(links: AsyncStream<LinkEvent>, restart: @escaping @Sendable (String) async -> Void) async {
        await inner.run(links: links, restart: restart)
    }

    /// Display's text waits its turn (a notification's): the call returns once it is queued.
    /// Throws `SessionError.notConnected` unless the glasses are ready or busy.
    public func display(_ text: String) async throws {
        let state = await inner.current.state
        guard state == .ready || state == .busy else {
            throw SessionError.notConnected("The glasses are not ready (\(state.rawValue)).")
        }
        message(text)
    }

    /// The answer streams on the display at once: nothing waits for it.
    public func answerStream(claim: Bool) async throws -> AnswerStream {
        let stream = try await inner.answerStream(claim: claim)
        arbiter.occupy(DisplayItem(id: "answer", priority: .answer), at: clock.now)
        settle()
        return stream
    }

    /// The answer stays for its reading time, then what waited may show.
    public func answerFinished(_ stream: AnswerStream?) async {
        await inner.answerFinished(stream)
        readFor(stream?.characters ?? 0)
    }

    /// A live screen (an agent session's transcript) shows at once, as an answer streaming does,
    /// and stays its reading time after its last update: notifications wait for it. Under a
    /// hazard or a critical notification it waits, the newest only, until they are over.
    public func live(_ text: String) async throws {
        if liveHeldBack {
            pendingLive = text
            settle()
            return
        }
        pendingLive = nil
        try await inner.display(text)
        arbiter.occupy(DisplayItem(id: "answer", priority: .answer), at: clock.now)
        readFor(text.count)
    }

    public func showPages(_ pages: [String]) async throws {
        try await inner.showPages(pages)
        arbiter.occupy(DisplayItem(id: "answer", priority: .answer), at: clock.now)
        readFor(pages.reduce(0) { $0 + $1.count })
    }

    /// A hazard shows at once, over anything, and holds the display until it is cleared.
    public func showAlert(_ text: String?) async throws {
        try await inner.showAlert(text)
        if text != nil {
            arbiter.occupy(DisplayItem(id: "hazard", priority: .hazard), at: clock.now)
        } else {
            arbiter.withdraw("hazard")
        }
        settle()
    }

    public func stopRecording() async throws { try await inner.stopRecording() }
    public func requestSceneFrame() async throws { try await inner.requestSceneFrame() }
    public func pageLayout() async -> AnswerLayout { await inner.pageLayout() }
    public func setListening(_ on: Bool) async throws { try await inner.setListening(on) }
    public func startQuestion(heard: String) async throws { try await inner.startQuestion(heard: heard) }
    public func speaker() async -> (any GlassesSpeaker)? { await inner.speaker() }
    public func bargeIn() async throws { try await inner.bargeIn() }

    /// A hazard or a critical notification has the display: a live screen waits until it is over.
    var liveHeldBack: Bool {
        guard let showing = arbiter.showing else { return false }
        return showing.priority == .hazard || (showing.critical && showing.priority == .notification)
    }

    /// The answer on the display stays for the reading time of `characters`.
    private func readFor(_ characters: Int) {
        if arbiter.showing?.id == "answer" {
            arbiter.expire("answer", at: clock.now.advanced(by: readingTime(characters, least: .seconds(4), most: .seconds(30))))
        }
        settle()
    }
}
