// SPDX-License-Identifier: GPL-2.0-or-later
import Concurrency
import Glasses
import LinkKit
import Logging
import Product
import Synchronization
import Testing

/// A spotter in memory: it keeps what it is fed; the test says when it wakes.
final class FakeSpotter: WakeSpotting {
    let fed = Mutex<[[Int16]]>([])
    let restarts = Mutex(0)
    let changed = Pulse()
    let (events, wakes) = AsyncStream.makeStream(of: WakeSpotterEvent.self)

    func submit(_ samples: [Int16]) {
        fed.withLock { $0.append(samples) }
        changed.pulse()
    }

    func restart() {
        restarts.withLock { $0 += 1 }
        changed.pulse()
    }

    func wait(until done: @Sendable () -> Bool) async {
        while true {
            let ticket = changed.ticket()
            if done() { return }
            await changed.wait(after: ticket)
        }
    }
}

/// What the watch reported, in order.
final class WakeReports: WakeReporting {
    let reports = Mutex<[WakeStatus]>([])
    let changed = Pulse()

    func wakeChanged(_ status: WakeStatus) async {
        reports.withLock { $0.append(status) }
        changed.pulse()
    }

    func until(_ done: @Sendable (WakeStatus) -> Bool) async -> WakeStatus {
        while true {
            let ticket = changed.ticket()
            if let last = reports.withLock({ $0.last }), done(last) { return last }
            await changed.wait(after: ticket)
        }
    }
}

@Suite("The wake phrase's watch, on glasses in memory", .timeLimit(.minutes(5)))
struct WakeWatchTests {
    let glasses = FakeGlasses()
    let spotter = FakeSpotter()
    let reports = WakeReports()

    func watch(_ source: WakeWatch.Source) -> WakeWatch {
        WakeWatch(
            session: glasses, spotter: spotter, events: spotter.events, phrase: "hey glasses", source: source, reporter: reports,
            logger: Logger(label: "test"))
    }

    @Test("glasses: each new link of ready glasses is asked to listen once; what they hear reaches the spotter at 16 kHz; a question restarts it")
    func glassesSource() async throws {
        let watch = watch(.glasses)
        let run = Task { await watch.run() }
        defer { run.cancel() }
        glasses.emit(.status(SessionStatus(state: .ready, generation: 1)))
        glasses.emit(.status(SessionStatus(state: .busy, generation: 1)))
        glasses.emit(.status(SessionStatus(state: .ready, generation: 1)))
        // 100 ms of the Monocle's 8 kHz 8-bit audio: 1,600 samples at 16 kHz, give or take the filter's delay.
        glasses.emit(.glasses(.listening([UInt8](repeating: 0x10, count: 800), format: AudioFormat(sampleRate: 8_000, bits: 8))))
        await spotter.wait { [spotter] in spotter.fed.withLock { $0.reduce(0) { $0 + $1.count } } >= 1_500 }
        glasses.emit(.status(SessionStatus(state: .disconnected, generation: 1)))
        glasses.emit(.status(SessionStatus(state: .ready, generation: 2)))
        // Asked for the link the glasses were on when the watch started (generation 0), then for
        // links 1 and 2: not again while link 1 went busy and ready.
        await glasses.wait { $0.listening.count >= 3 }
        #expect(glasses.record.withLock { $0.listening } == [true, true, true])
        let listening = await reports.until { $0.state == .listening }
        #expect(listening.source == "glasses" && listening.phrase == "hey glasses")

        glasses.emit(.glasses(.questionStart(photo: false, audio: AudioFormat(sampleRate: 8_000, bits: 8))))
        await spotter.wait { [spotter] in spotter.restarts.withLock { $0 } == 1 }
    }

    @Test("a wake starts a question on the glasses, saying what was heard; busy glasses are left alone, and the wake is still counted")
    func wakesStartQuestions() async throws {
        let watch = watch(.glasses)
        let run = Task { await watch.run() }
        defer { run.cancel() }
        spotter.wakes.yield(.wake)
        await glasses.wait { $0.questionsStarted == ["Heard \"hey glasses\""] }
        glasses.refuseQuestions.withLock { $0 = .busy }
        spotter.wakes.yield(.wake)
        spotter.wakes.yield(.decoded(seconds: 19))
        spotter.wakes.yield(.decoded(seconds: 20))
        let status = await reports.until { $0.listenedSeconds == 20 }
        // Reported every ten seconds of audio, not each.
        #expect(!reports.reports.withLock { $0 }.contains { $0.listenedSeconds == 19 })
        #expect(status.heard == 2)
        #expect(glasses.record.withLock { $0.questionsStarted.count } == 1)
    }

    @Test("host: its samples go to the spotter as they are; a recorder that stops is reported with its reason, and listening again when it is back")
    func hostSource() async throws {
        let (audio, microphone) = AsyncStream.makeStream(of: WakeWatch.HostAudio.self)
        let watch = watch(.host(audio))
        let run = Task { await watch.run() }
        defer { run.cancel() }
        microphone.yield(.started)
        _ = await reports.until { $0.state == .listening && $0.source == "host" }
        microphone.yield(.samples([1, 2, 3]))
        await spotter.wait { [spotter] in spotter.fed.withLock { $0 } == [[1, 2, 3]] }
        microphone.yield(.stopped("The microphone's recorder ended (status 1)."))
        let waiting = await reports.until { $0.state == .waiting }
        #expect(waiting.error == "The microphone's recorder ended (status 1).")
        microphone.yield(.started)
        _ = await reports.until { $0.state == .listening && $0.error.isEmpty }
        // The host's microphone does not ask the glasses to listen.
        glasses.emit(.status(SessionStatus(state: .ready, generation: 1)))
        spotter.wakes.yield(.wake)
        await glasses.wait { $0.questionsStarted.count == 1 }
        #expect(glasses.record.withLock { $0.listening }.isEmpty)
    }

    @Test("glasses ready before the watch was made are asked to listen at once")
    func readyBefore() async throws {
        // FakeGlasses are ready from the start; no status event comes.
        let watch = watch(.glasses)
        let run = Task { await watch.run() }
        defer { run.cancel() }
        await glasses.wait { $0.listening == [true] }
        _ = await reports.until { $0.state == .listening }
    }

    @Test("glasses that cannot listen: the watch says so and why")
    func unsupportedGlasses() async throws {
        let watch = WakeWatch(
            session: DeafGlasses(), spotter: spotter, events: spotter.events, phrase: "hey glasses", source: .glasses,
            reporter: reports, logger: Logger(label: "test"))
        let run = Task { await watch.run() }
        defer { run.cancel() }
        let failed = await reports.until { $0.state == .failed }
        #expect(failed.error == "These glasses cannot listen for the wake phrase.")
    }
}

/// Glasses without the wake phrase's messages: the protocol's defaults.
private final class DeafGlasses: GlassesSession {
    func subscribe() -> AsyncStream<SessionEvent> {
        AsyncStream { $0.yield(.status(SessionStatus(state: .ready, generation: 1))) }
    }
    var current: SessionStatus { SessionStatus(state: .ready) }
    func run(links: AsyncStream<LinkEvent>, restart: @escaping @Sendable (String) async -> Void) async {}
    func display(_ text: String) async throws {}
    func answerStream(claim: Bool) async throws -> AnswerStream { AnswerStream(maxPayload: 64) { _ in } }
    func answerFinished(_ stream: AnswerStream?) async {}
    func stopRecording() async throws {}
    func requestSceneFrame() async throws {}
    func showAlert(_ text: String?) async throws {}
    func pageLayout() async -> AnswerLayout { AnswerLayout(columns: 26, lines: 7) }
}
