// SPDX-License-Identifier: GPL-2.0-or-later
import Concurrency
import LinkKit

/// One session for every kind of glasses: each link that comes up is served by the session of
/// its kind (told by the link's profile), and the router speaks for the session whose link came
/// up last: its status and events reach subscribers, requests go to it. glassd pairs with one
/// pair of glasses at a time, so at most one of them has a link.
public actor SessionRouter: GlassesSession {
    private let sessions: [(profile: String, session: any GlassesSession)]
    private var active = 0
    /// Which session each link generation went to, so its `down` follows it.
    private var generations: [UInt64: Int] = [:]
    private let sink = Broadcast<SessionEvent>()

    /// `sessions` by the profile name their links carry; the first speaks until a link comes up.
    public init(_ sessions: [(profile: String, session: any GlassesSession)]) {
        precondition(!sessions.isEmpty)
        self.sessions = sessions
    }

    public nonisolated func subscribe() -> AsyncStream<SessionEvent> { sink.subscribe() }

    /// The session that speaks now (its kind's link came up last): what an update asks for a
    /// kind's own abilities (`BootloaderEntry`).
    public var activeSession: any GlassesSession { sessions[active].session }
    /// The profile of the session that speaks now: which kind the paired glasses are.
    public var activeProfile: String { sessions[active].profile }

    public var current: SessionStatus {
        get async { await sessions[active].session.current }
    }

    public func run(links: AsyncStream<LinkEvent>, restart: @escaping @Sendable (String) async -> Void) async {
        let feeds = sessions.map { _ in AsyncStream.makeStream(of: LinkEvent.self) }
        // Subscribed before the sessions run, so nothing they say is missed.
        let events = sessions.map { $0.session.subscribe() }
        await withDiscardingTaskGroup { group in
            for (index, entry) in sessions.enumerated() {
                let stream = feeds[index].stream
                group.addTask { await entry.session.run(links: stream, restart: restart) }
                let subscription = events[index]
                group.addTask {
                    for await event in subscription { await self.forward(event, from: index) }
                }
            }
            for await event in links {
                guard let index = route(event) else { continue }
                feeds[index].continuation.yield(event)
            }
            for feed in feeds { feed.continuation.finish() }
            // The sessions end with their feeds; their event streams do not end by themselves.
            group.cancelAll()
        }
    }

    /// The session a link event goes to: an `up` to its kind's (which then speaks), a `down` to
    /// the one that got its `up`.
    private func route(_ event: LinkEvent) -> Int? {
        switch event {
        case .up(let link, let generation):
            guard let index = sessions.firstIndex(where: { $0.profile == link.profile.name }) else { return nil }
            active = index
            generations[generation] = index
            return index
        case .down(let generation, _):
            return generations.removeValue(forKey: generation)
        }
    }

    private func forward(_ event: SessionEvent, from index: Int) {
        guard index == active else { return }
        sink.publish(event)
    }

    public func display(_ text: String) async throws { try await sessions[active].session.display(text) }

    public func answerStream(claim: Bool) async throws -> AnswerStream {
        try await sessions[active].session.answerStream(claim: claim)
    }

    public func answerFinished(_ stream: AnswerStream?) async { await sessions[active].session.answerFinished(stream) }

    public func stopRecording() async throws { try await sessions[active].session.stopRecording() }

    public func requestSceneFrame() async throws { try await sessions[active].session.requestSceneFrame() }

    public func showAlert(_ text: String?) async throws { try await sessions[active].session.showAlert(text) }
    public func showPages(_ pages: [String]) async throws { try await sessions[active].session.showPages(pages) }
    public func pageLayout() async -> AnswerLayout { await sessions[active].session.pageLayout() }
    public func setListening(_ on: Bool) async throws { try await sessions[active].session.setListening(on) }
    public func startQuestion(heard: String) async throws { try await sessions[active].session.startQuestion(heard: heard) }
    public func speaker() async -> (any GlassesSpeaker)? { await sessions[active].session.speaker() }
    public func bargeIn() async throws { try await sessions[active].session.bargeIn() }
}
