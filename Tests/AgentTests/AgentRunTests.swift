// SPDX-License-Identifier: GPL-2.0-or-later
import Agent
import AssistantEngine
import Audio
import Concurrency
import Foundation
import Glasses
import Logging
import Synchronization
import Testing
import TestSupport

/// A TEN server's HTTP API in memory: answers by path, records every request, fails as told.
final class FakeTENAPI: HTTPTransport {
    struct Recorded: Sendable {
        var path: String
        var body: [String: Any] { (try? JSONSerialization.jsonObject(with: Data(bytes))) as? [String: Any] ?? [:] }
        var bytes: [UInt8]
    }

    private struct State {
        var requests: [Recorded] = []
        var failPings = 0
        var startCodes: [String] = []
    }

    private let state = Mutex(State())
    /// Fires on each request (tests wait for one to arrive).
    let arrived = Pulse()

    var requests: [Recorded] { state.withLock { $0.requests } }
    func paths() -> [String] { requests.map(\.path) }
    func failNextPings(_ count: Int) { state.withLock { $0.failPings = count } }
    func refuseStarts(_ codes: [String]) { state.withLock { $0.startCodes = codes } }

    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        let path = String(request.url.split(separator: "/", omittingEmptySubsequences: false).last ?? "")
        let reply: (Int, String) = state.withLock { s in
            s.requests.append(Recorded(path: path, bytes: request.body))
            switch path {
            case "start" where !s.startCodes.isEmpty:
                let code = s.startCodes.removeFirst()
                return (code == "10001" ? 429 : 400, #"{"code":"\#(code)","msg":"refused","data":null}"#)
            case "ping" where s.failPings > 0:
                s.failPings -= 1
                return (500, #"{"code":"10101","msg":"worker gone","data":null}"#)
            case "list":
                return (200, #"{"code":"0","msg":"ok","data":[null,{"channelName":"c","createTs":1}]}"#)
            default:
                return (200, #"{"code":"0","msg":"ok","data":null}"#)
            }
        }
        arrived.pulse()
        let (body, continuation) = AsyncThrowingStream.makeStream(of: [UInt8].self, throwing: (any Error).self)
        continuation.yield(Array(reply.1.utf8))
        continuation.finish()
        return HTTPResponse(status: reply.0, headers: ["content-type": "application/json"], body: body)
    }

    /// Returns once `count` requests to `path` have arrived.
    func wait(for path: String, count: Int = 1) async {
        while true {
            let ticket = arrived.ticket()
            if paths().filter({ $0 == path }).count >= count { return }
            await arrived.wait(after: ticket)
        }
    }
}

/// The graph's websocket in memory: what glassd sent, and a way to send it the server's messages.
final class FakeAgentSocket: AgentSocket {
    let sent = Mutex<[String]>([])
    let closed = OneShotEvent()
    let sentPulse = Pulse()
    private let stream: AsyncThrowingStream<String, any Error>
    let server: AsyncThrowingStream<String, any Error>.Continuation

    init() {
        (stream, server) = AsyncThrowingStream.makeStream(of: String.self, throwing: (any Error).self)
    }

    func send(text: String) async throws {
        sent.withLock { $0.append(text) }
        sentPulse.pulse()
    }

    var messages: any AsyncSequence<String, any Error> { stream }

    func close() async {
        server.finish()
        closed.fire()
    }

    func waitSent(_ count: Int) async {
        await waitSent { $0.count >= count }
    }

    /// Until what was sent satisfies `done` (the suite's time limit bounds it).
    func waitSent(until done: ([String]) -> Bool) async {
        while true {
            let ticket = sentPulse.ticket()
            if sent.withLock({ done($0) }) { return }
            await sentPulse.wait(after: ticket)
        }
    }
}

/// Records what a session reports.
final class RecordedOutput: AgentOutput {
    struct Turn: Equatable, Sendable {
        var number: Int
        var question: String
        var answer: String
    }

    let states = Mutex<[String]>([])
    let lines = Mutex<[TranscriptBoard.Line]>([])
    let turns = Mutex<[Turn]>([])
    let levels = Mutex<[Double]>([])
    let channels = Mutex<[String]>([])
    let changed = Pulse()

    func state(_ state: AgentState, error: String) {
        states.withLock { $0.append(error.isEmpty ? state.rawValue : "\(state.rawValue): \(error)") }
        changed.pulse()
    }
    func channel(_ channel: String) { channels.withLock { $0.append(channel) } }
    func transcript(_ line: TranscriptBoard.Line) {
        lines.withLock { $0.append(line) }
        changed.pulse()
    }
    func level(_ dBFS: Double) {
        levels.withLock { $0.append(dBFS) }
        changed.pulse()
    }
    func turn(_ number: Int, question: String, answer: String) async {
        turns.withLock { $0.append(Turn(number: number, question: question, answer: answer)) }
        changed.pulse()
    }
    func speech(pcm: [UInt8], sampleRate: Int, channels: Int) {}

    /// Returns once `condition` holds on what was recorded.
    func until(_ condition: @Sendable (RecordedOutput) -> Bool) async {
        while true {
            let ticket = changed.ticket()
            if condition(self) { return }
            await changed.wait(after: ticket)
        }
    }
}

struct NoLedger: AgentLedger {
    func started(channel: String) async {}
    func ended() async {}
}

private func transcript(_ role: String, _ text: String, final: Bool, ts: Int) -> String {
    #"{"type":"data","name":"text_data","data":{"data_type":"transcribe","role":"\#(role)","text":"\#(text)","is_final":\#(final),"text_ts":\#(ts),"stream_id":1}}"#
}

@Suite("Agent session", .timeLimit(.minutes(5)))
struct AgentRunTests {
    struct Fixture {
        let api = FakeTENAPI()
        let socket = FakeAgentSocket()
        let output = RecordedOutput()
        let clock = ManualClock()
        let claim = EventClaim()

        func run(settings: AgentSettings = AgentSettings(baseURL: "http://ten.test:8080")) -> AgentRun<ManualClock> {
            let socket = self.socket
            return AgentRun(
                graph: settings.graph, settings: settings, client: TENClient(baseURL: settings.baseURL, transport: api),
                openSocket: { _ in socket }, glasses: nil, statuses: nil, claim: claim, voice: VoiceSettings(),
                output: output, ledger: NoLedger(), clock: clock, logger: Logger(label: "test"))
        }
    }

    @Test("a websocket that does not open fails the session with the last attempt's error (a refused certificate says so)")
    func socketDidNotOpen() async throws {
        struct Refused: Error, CustomStringConvertible {
            var description: String { "the server's TLS certificate is not trusted: unknown issuer" }
        }
        let f = Fixture()
        var settings = AgentSettings(baseURL: "https://ten.test")
        settings.connectWindow = .zero
        let run = AgentRun(
            graph: settings.graph, settings: settings, client: TENClient(baseURL: settings.baseURL, transport: f.api),
            openSocket: { _ in throw Refused() }, glasses: nil, statuses: nil, claim: f.claim, voice: VoiceSettings(),
            output: f.output, ledger: NoLedger(), clock: f.clock, logger: Logger(label: "test"))
        try await run.start()
        await run.serve()
        #expect(
            f.output.states.withLock { $0 }.last
                == "failed: The agent's websocket at wss://ten.test:8765 did not open: "
                + "the server's TLS certificate is not trusted: unknown issuer.")
        #expect(f.api.paths().last == "stop")
    }

    @Test("start sends the graph, a fresh request id and channel, the properties and the timeout; stop tells the server")
    func startAndStop() async throws {
        let f = Fixture()
        var settings = AgentSettings(baseURL: "http://ten.test:8080", graph: "voice_assistant")
        settings.properties = .object(["llm": .object(["model": .string("m")])])
        settings.timeoutSeconds = 120
        let run = f.run(settings: settings)
        try await run.start()
        let start = try #require(f.api.requests.first)
        #expect(start.path == "start")
        #expect(start.body["graph_name"] as? String == "voice_assistant")
        #expect(start.body["channel_name"] as? String == run.channel)
        #expect(run.channel.hasPrefix("glassd-"))
        #expect(UUID(uuidString: start.body["request_id"] as? String ?? "") != nil)
        #expect(start.body["timeout"] as? Int == 120)
        #expect((start.body["user_uid"] as? Int).map { $0 > 0 && $0 <= Int(UInt32.max) } == true)
        #expect(((start.body["properties"] as? [String: Any])?["llm"] as? [String: Any])?["model"] as? String == "m")
        let served = Task { await run.serve() }
        await f.output.until { $0.states.withLock { $0.contains("running") } }
        run.stop()
        await served.value
        #expect(f.output.states.withLock { $0 } == ["starting", "running", "stopping", "stopped"])
        let stop = try #require(f.api.requests.last)
        #expect(stop.path == "stop")
        #expect(stop.body["channel_name"] as? String == run.channel)
        #expect(stop.body["request_id"] as? String == start.body["request_id"] as? String)
        #expect(f.socket.closed.hasFired)
        #expect(!f.claim.isClaimed)
    }

    @Test("transcripts: partial lines replace each other, finals fix them, and a final exchange is one turn")
    func transcripts() async throws {
        let f = Fixture()
        let run = f.run()
        try await run.start()
        let served = Task { await run.serve() }
        await f.output.until { $0.states.withLock { $0.contains("running") } }
        for message in [
            transcript("user", "what is", final: false, ts: 1), transcript("user", "what is the time", final: true, ts: 2),
            transcript("assistant", "It is", final: false, ts: 3), transcript("assistant", "It is noon.", final: true, ts: 4),
            // Older than the last final line of its role: dropped.
            transcript("user", "stale", final: false, ts: 1),
        ] { f.socket.server.yield(message) }
        await f.output.until { $0.turns.withLock { $0.count } == 1 }
        #expect(f.output.turns.withLock { $0 } == [.init(number: 1, question: "what is the time", answer: "It is noon.")])
        #expect(f.output.lines.withLock { $0.map(\.text) } == ["what is", "what is the time", "It is", "It is noon."])
        #expect(f.output.lines.withLock { $0.map(\.isFinal) } == [false, true, false, true])
        run.stop()
        await served.value
        #expect(!f.output.lines.withLock { $0.map(\.text) }.contains("stale"))
    }

    @Test("three failed pings in a row end the session as failed, saying so; one failure does not")
    func pingFailures() async throws {
        let f = Fixture()
        let run = f.run()
        try await run.start()
        let served = Task { await run.serve() }
        await f.output.until { $0.states.withLock { $0.contains("running") } }
        f.api.failNextPings(1)
        for n in 1...3 {
            await f.clock.sleeping()
            f.clock.advance(by: .seconds(3))
            await f.api.wait(for: "ping", count: n)
        }
        #expect(f.output.states.withLock { $0 } == ["starting", "running"])
        f.api.failNextPings(3)
        for n in 4...6 {
            await f.clock.sleeping()
            f.clock.advance(by: .seconds(3))
            await f.api.wait(for: "ping", count: n)
        }
        await served.value
        let states = f.output.states.withLock { $0 }
        #expect(states.last?.hasPrefix("failed: The agent server did not answer 3 pings in a row") == true, "\(states)")
        #expect(f.api.paths().last == "stop")
    }

    @Test("a channel the server already has is retried once under a new name; the workers limit is Busy")
    func startRefusals() async throws {
        let f = Fixture()
        f.api.refuseStarts(["10003"])
        let run = f.run()
        try await run.start()
        let channels = f.api.requests.map { $0.body["channel_name"] as? String }
        #expect(channels.count == 2 && channels[0] != channels[1])
        #expect(run.channel == channels[1])

        let g = Fixture()
        g.api.refuseStarts(["10001"])
        await #expect(throws: AgentError.self) { try await g.run().start() }
        #expect(g.output.states.withLock { $0.last?.hasPrefix("failed") } == true)

        let h = Fixture()
        h.api.refuseStarts(["10003", "10003"])
        do {
            try await h.run().start()
            Issue.record("a second refusal must fail the start")
        } catch {
            #expect(error == .channelExists("refused"))
        }
    }

    @Test("the wearer's audio goes to the agent as 16 kHz s16 base64 pieces of 20 to 100 ms; levels are reported")
    func uplink() async throws {
        let f = Fixture()
        let run = f.run()
        try await run.start()
        let served = Task { await run.serve() }
        await f.output.until { $0.states.withLock { $0.contains("running") } }
        #expect(f.claim.isClaimed)
        // One second of an 8 kHz 8-bit tone, as a Monocle sends it.
        let tone = (0..<8000).map { UInt8(bitPattern: Int8(clamping: Int((sin(Double($0) * 0.3) * 60).rounded()))) }
        #expect(f.claim.route(.questionStart(photo: false, audio: AudioFormat(sampleRate: 8_000, bits: 8))))
        for piece in stride(from: 0, to: tone.count, by: 400) {
            #expect(f.claim.route(.audio(Array(tone[piece..<min(piece + 400, tone.count)]))))
        }
        #expect(f.claim.route(.audioEnd))
        @Sendable func audioBytes(_ sent: [String]) -> [Int] {
            sent.compactMap { text -> Int? in
                let object = (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any]
                return (object?["audio"] as? String).flatMap { Data(base64Encoded: $0) }?.count
            }
        }
        // The whole second, not a count of pieces: the uplink's last pieces may follow audioEnd's routing.
        await f.socket.waitSent { audioBytes($0).reduce(0, +) >= 32_000 - 1280 }
        // One look at what was sent: the uplink's last piece may arrive between two.
        let sent = f.socket.sent.withLock { $0 }
        let pieces = audioBytes(sent)
        #expect(pieces.count == sent.count)
        #expect(pieces.allSatisfy { $0 % 2 == 0 && $0 <= 3200 })
        #expect(pieces.dropLast().allSatisfy { $0 >= 640 })
        let total = pieces.reduce(0, +)
        #expect(abs(total - 32_000) <= 1280, "one second at 16 kHz s16: \(total) bytes")
        await f.output.until { !$0.levels.withLock { $0.isEmpty } }
        #expect(f.output.levels.withLock { $0 }.allSatisfy { $0 <= 0 && $0 >= -100 })
        run.stop()
        await served.value
    }

    @Test("a websocket the server closes ends the session as failed, and the server is told to stop")
    func socketClosed() async throws {
        let f = Fixture()
        let run = f.run()
        try await run.start()
        let served = Task { await run.serve() }
        await f.output.until { $0.states.withLock { $0.contains("running") } }
        f.socket.server.finish()
        await served.value
        #expect(f.output.states.withLock { $0.last } == "failed: The agent closed its websocket.")
        #expect(f.api.paths().last == "stop")
    }
}
