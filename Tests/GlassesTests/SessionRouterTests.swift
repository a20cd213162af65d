// SPDX-License-Identifier: GPL-2.0-or-later
import Concurrency
import Glasses
import LinkKit
import Synchronization
import Testing

/// A session that reports each link it is given as a status, and records what is asked of it.
private actor RecordingSession: GlassesSession {
    let name: String
    private let sink = Broadcast<SessionEvent>()
    private var status = SessionStatus(state: .disconnected)
    private(set) var displayed: [String] = []
    private(set) var bargeIns = 0

    init(name: String) { self.name = name }

    nonisolated func subscribe() -> AsyncStream<SessionEvent> { sink.subscribe() }
    var current: SessionStatus { status }

    func run(links: AsyncStream<LinkEvent>, restart: @escaping @Sendable (String) async -> Void) async {
        for await event in links {
            switch event {
            case .up(_, let generation):
                status = SessionStatus(state: .ready, reason: name, generation: generation)
                sink.publish(.status(status))
                sink.publish(.glasses(.tap))
            case .down(let generation, _):
                status = SessionStatus(state: .disconnected, reason: name, generation: generation)
                sink.publish(.status(status))
            }
        }
    }

    func display(_ text: String) async throws { displayed.append(text) }
    func bargeIn() async throws { bargeIns += 1 }
    func answerStream(claim: Bool) async throws -> AnswerStream { AnswerStream(maxPayload: 10) { _ in } }
    func answerFinished(_ stream: AnswerStream?) async {}
    func stopRecording() async throws {}
    func requestSceneFrame() async throws {}
    func showAlert(_ text: String?) async throws {}
    func pageLayout() -> AnswerLayout { AnswerLayout(columns: 26, lines: 7) }
}

private struct ProfileLink: GlassesLink {
    let profile: GATTProfile
    func channel(_ name: String) -> (any ByteChannel)? { nil }
}

@Suite("Sessions of several kinds behind one", .timeLimit(.minutes(5)))
struct SessionRouterTests {
    @Test("each link goes to its kind's session, which then speaks and takes the requests; a down follows its up")
    func routing() async throws {
        let monocle = RecordingSession(name: "monocle")
        let frame = RecordingSession(name: "frame")
        let router = SessionRouter([("monocle", monocle), ("frame", frame)])
        var events = router.subscribe().makeAsyncIterator()
        let (links, feed) = AsyncStream.makeStream(of: LinkEvent.self)
        let run = Task { await router.run(links: links) { _ in } }

        feed.yield(.up(ProfileLink(profile: GATTProfile(name: "frame", channels: [])), generation: 1))
        #expect(await events.next() == .status(SessionStatus(state: .ready, reason: "frame", generation: 1)))
        #expect(await events.next() == .glasses(.tap))
        try await router.display("to the frame")
        #expect(await frame.displayed == ["to the frame"])
        #expect(await monocle.displayed.isEmpty)
        // Also what a kind's session has of its own beyond the protocol's defaults.
        try await router.bargeIn()
        #expect(await frame.bargeIns == 1)
        #expect(await monocle.bargeIns == 0)
        #expect(await router.current.reason == "frame")

        feed.yield(.down(generation: 1, reason: "gone"))
        #expect(await events.next() == .status(SessionStatus(state: .disconnected, reason: "frame", generation: 1)))

        // A link of an unknown profile is served by nobody; the next Monocle link speaks.
        feed.yield(.up(ProfileLink(profile: GATTProfile(name: "other", channels: [])), generation: 2))
        feed.yield(.up(ProfileLink(profile: GATTProfile(name: "monocle", channels: [])), generation: 3))
        #expect(await events.next() == .status(SessionStatus(state: .ready, reason: "monocle", generation: 3)))
        try await router.display("to the monocle")
        #expect(await monocle.displayed == ["to the monocle"])
        #expect(await frame.displayed == ["to the frame"])
        feed.finish()
        await run.value
    }
}
