// SPDX-License-Identifier: GPL-2.0-or-later
import Audio
import Concurrency
import Foundation
import Glasses
import Logging
import Synchronization

/// One agent session: started on the TEN server (`start`), then served (`serve`) until stopped or
/// failed: pinged, the graph's websocket carrying the wearer's voice out and transcripts back,
/// shown on the glasses as they arrive and kept as turns once final. It always ends by telling
/// the server to stop, and gives the glasses' questions back.
public final class AgentRun<C: Clock>: Sendable where C.Duration == Duration {
    /// Pings that fail in a row before the session is given up.
    static var pingFailuresAllowed: Int { 3 }

    public let graph: String
    let settings: AgentSettings
    let client: TENClient
    let openSocket: AgentSocketOpener
    let glasses: (any GlassesSession)?
    /// Where the live screen goes (glassd: the display desk, so notifications wait for it);
    /// nil: the glasses' `display`.
    let screen: (@Sendable (String) async throws -> Void)?
    let statuses: Watched<SessionStatus>?
    let claim: EventClaim?
    let voice: VoiceSettings
    let output: any AgentOutput
    let ledger: any AgentLedger
    let clock: C
    let logger: Logger
    private let stopRequested = OneShotEvent()
    /// Fires once the session has ended (stopped or failed) and the server was told.
    public let ended = OneShotEvent()
    private let identity = Mutex(Identity())
    /// The wearer is recording for the agent (a question started, not ended).
    private let capturing = Mutex(false)

    struct Identity {
        var requestID = UUID().uuidString.lowercased()
        var channel = ""
    }

    /// Why the websocket did not open: the last attempt's error, if one was made.
    struct ConnectFailure: Error {
        var why: String?
        init(_ why: String?) { self.why = why }
    }

    enum Outcome: Sendable, Equatable {
        case stopped(String)
        case failed(String)
    }

    public init(
        graph: String, settings: AgentSettings, client: TENClient, openSocket: @escaping AgentSocketOpener,
        glasses: (any GlassesSession)?, statuses: Watched<SessionStatus>?, claim: EventClaim?, voice: VoiceSettings,
        output: any AgentOutput, ledger: any AgentLedger, clock: C, logger: Logger,
        screen: (@Sendable (String) async throws -> Void)? = nil
    ) {
        self.screen = screen
        self.graph = graph
        self.settings = settings
        self.client = client
        self.openSocket = openSocket
        self.glasses = glasses
        self.statuses = statuses
        self.claim = claim
        self.voice = voice
        self.output = output
        self.ledger = ledger
        self.clock = clock
        self.logger = logger
    }

    public var channel: String { identity.withLock { $0.channel } }

    /// A channel name of glassd's own, new each time.
    static func newChannel() -> String {
        "glassd-" + UUID().uuidString.lowercased().prefix(13).replacingOccurrences(of: "-", with: "")
    }

    /// POST /start. A channel the server already has is retried once under a new name. Throws the
    /// server's refusal; the session has then failed (and said so).
    public func start() async throws(AgentError) {
        output.state(.starting, error: "")
        var retried = false
        while true {
            let channel = Self.newChannel()
            let requestID = identity.withLock { i in
                i.channel = channel
                return i.requestID
            }
            output.channel(channel)
            do {
                try await client.start(
                    TENStartRequest(
                        requestID: requestID, channel: channel, graph: graph, userUID: UInt32.random(in: 1...UInt32.max),
                        properties: settings.properties, timeoutSeconds: settings.timeoutSeconds))
                await ledger.started(channel: channel)
                logger.info("agent session started", metadata: ["channel": "\(channel)", "graph": "\(graph)"])
                return
            } catch {
                if case .channelExists = error, !retried {
                    retried = true
                    continue
                }
                output.state(.failed, error: error.message)
                ended.fire()
                throw error
            }
        }
    }

    /// Asks a served session to stop; `ended` fires once it has.
    public func stop() { stopRequested.fire() }

    /// After a successful `start`: runs the session until it is stopped or fails.
    public func serve() async {
        let outcome: Outcome
        switch await connect() {
        case .success(let socket):
            output.state(.running, error: "")
            outcome = await running(socket)
            output.state(.stopping, error: "")
            await socket.close()
        case .failure(let failure):
            // The last attempt's error says why (a certificate refused reads as such).
            outcome = .failed("The agent's websocket at \(settings.websocketURL) did not open" + (failure.why.map { ": \($0)." } ?? "."))
            output.state(.stopping, error: "")
        }
        await tellServerToStop()
        claim?.release()
        // A recording under way is stopped; the glasses' own questions take its end (and give
        // the glasses an empty answer), as the claim is released.
        if capturing.withLock({ $0 }), let glasses { try? await glasses.stopRecording() }
        switch outcome {
        case .stopped(let why):
            logger.info("agent session stopped: \(why)", metadata: ["channel": "\(channel)"])
            output.state(.stopped, error: "")
        case .failed(let why):
            logger.notice("agent session failed: \(why)", metadata: ["channel": "\(channel)"])
            output.state(.failed, error: why)
        }
        ended.fire()
    }

    /// The graph's websocket, tried until `connectWindow` passes (its worker needs a moment), or a stop.
    private func connect() async -> Result<any AgentSocket, ConnectFailure> {
        let deadline = clock.now.advanced(by: settings.connectWindow)
        var wait = Duration.milliseconds(100)
        var last: String?
        while !stopRequested.hasFired {
            do {
                return .success(try await openSocket(settings.websocketURL))
            } catch {
                logger.debug("agent websocket not open yet: \(error)")
                last = "\(error)"
            }
            guard clock.now.advanced(by: wait) < deadline else { return .failure(ConnectFailure(last)) }
            do { try await clock.sleep(for: wait, tolerance: nil) } catch { return .failure(ConnectFailure(last)) }
            wait = min(wait * 2, .seconds(2))
        }
        return .failure(ConnectFailure(nil))
    }

    private func running(_ socket: any AgentSocket) async -> Outcome {
        let events = claim?.claim()
        let shown = Watched<String?>(nil)
        return await withTaskGroup(of: Outcome?.self) { group in
            group.addTask { [stopRequested] in
                await stopRequested.wait()
                return .stopped("asked to stop")
            }
            group.addTask { await self.pinging() }
            group.addTask { await self.reading(socket, shown: shown) }
            if let events { group.addTask { await self.uplink(events, to: socket, shown: shown) } }
            if let statuses { group.addTask { await self.watchAway(statuses) } }
            if let glasses {
                let show = screen ?? { try await glasses.display($0) }
                group.addTask { await Self.display(shown, with: show) }
            }
            var outcome = Outcome.stopped("asked to stop")
            for await result in group {
                if let result {
                    outcome = result
                    break
                }
            }
            group.cancelAll()
            return outcome
        }
    }

    /// POST /ping every `ping`; three failures in a row end the session.
    private func pinging() async -> Outcome? {
        var failures = 0
        let (requestID, channel) = identity.withLock { ($0.requestID, $0.channel) }
        while true {
            do { try await clock.sleep(for: settings.ping, tolerance: nil) } catch { return nil }
            do {
                try await client.ping(requestID: requestID, channel: channel)
                failures = 0
            } catch {
                failures += 1
                logger.info("agent ping failed (\(failures) in a row): \(error.message)")
                if failures >= Self.pingFailuresAllowed {
                    return .failed("The agent server did not answer \(failures) pings in a row: \(error.message)")
                }
            }
        }
    }

    /// The server's messages: transcripts to the glasses, the bus and History; speech to the speaker.
    private func reading(_ socket: any AgentSocket, shown: Watched<String?>) async -> Outcome? {
        var chunks = TranscriptChunks<C>()
        var board = TranscriptBoard()
        var turns = TurnPairing()
        do {
            for try await text in socket.messages {
                for inbound in AgentServerMessage.decode(text, chunks: &chunks, at: clock.now) {
                    switch inbound {
                    case .transcript(let transcript):
                        guard let change = board.apply(transcript) else { continue }
                        // Kept before it is announced: a final line on the bus is in History.
                        if let final = change.finalized, let turn = turns.add(final) {
                            await output.turn(turn.number, question: turn.question, answer: turn.answer)
                        }
                        output.transcript(change.line)
                        shown.set(AgentScreen.render(board.lines))
                    case .audio(let pcm, let sampleRate, let channels):
                        if settings.speak { output.speech(pcm: pcm, sampleRate: sampleRate, channels: channels) }
                    case .error(let message):
                        logger.notice("the agent reported an error: \(message)")
                    case .command(let name):
                        logger.debug("agent command ignored: \(name)")
                    case .ignored(let why):
                        logger.debug("agent message ignored: \(why)")
                    }
                }
            }
            if Task.isCancelled { return nil }
            return .failed("The agent closed its websocket.")
        } catch {
            if Task.isCancelled { return nil }
            return .failed("The agent's websocket broke: \(error)")
        }
    }

    /// The wearer's questions, while the session holds them: the audio, converted as for
    /// transcription, streams to the agent; the glasses stop recording when the speaker has.
    private func uplink(_ events: AsyncStream<GlassesEvent>, to socket: any AgentSocket, shown: Watched<String?>) async -> Outcome? {
        var uplink: AudioUplink?
        var meter = LevelMeter<C>()
        var stopSent = false
        var sendFailed = false
        func send(_ messages: [String]) async {
            for message in messages {
                do {
                    try await socket.send(text: message)
                } catch {
                    if !sendFailed { logger.info("cannot send the wearer's audio to the agent: \(error)") }
                    sendFailed = true
                }
            }
        }
        for await event in events {
            switch event {
            case .questionStart(_, let audio):
                stopSent = false
                capturing.withLock { $0 = true }
                do {
                    uplink = try AudioUplink(
                        input: PCMInput(
                            sampleRate: audio.sampleRate, bits: audio.bits, lc3Frame: audio.lc3Frame, muLaw: audio.isMuLaw),
                        voice: voice)
                } catch {
                    logger.notice("the glasses' audio (\(audio)) cannot be sent to the agent: \(error)")
                    uplink = nil
                }
            case .audio(let bytes):
                guard let current = uplink else { continue }
                let out = current.append(bytes)
                await send(out.messages)
                if let level = meter.add(out.samples, at: clock.now) { output.level(level) }
                if out.ended && !stopSent, let glasses {
                    stopSent = true
                    try? await glasses.stopRecording()
                }
            case .audioEnd:
                capturing.withLock { $0 = false }
                if let current = uplink { await send(current.finish()) }
                uplink = nil
                // The agent answers in its own time: the glasses, waiting for an answer, are given an
                // empty one, so they are free for the next question, and show the session again.
                if let glasses { await glasses.giveEmptyAnswer() }
                shown.set(shown.current)
            case .photoData, .photoEnd, .sceneFrame, .tap, .cancelled, .listening, .overheard, .glance:
                continue
            }
        }
        return nil
    }

    /// Ends the session when the glasses have been away longer than the server's timeout.
    private func watchAway(_ statuses: Watched<SessionStatus>) async -> Outcome? {
        let away = Duration.seconds(settings.timeoutSeconds)
        func here(_ status: SessionStatus) -> Bool { status.state == .ready || status.state == .busy }
        while !Task.isCancelled {
            do {
                // Wait (as long as it takes) for them to go, then for them to come back within `away`.
                guard (try await statuses.wait(timeout: .seconds(86_400), clock: clock) { !here($0) }) != nil else { continue }
                if try await statuses.wait(timeout: away, clock: clock, until: here) == nil {
                    return .stopped("the glasses were away for more than \(settings.timeoutSeconds) s")
                }
            } catch {
                return nil
            }
        }
        return nil
    }

    /// The newest screen, shown as fast as the link takes it (older ones not yet shown are skipped).
    private static func display(_ shown: Watched<String?>, with show: @Sendable (String) async throws -> Void) async -> Outcome? {
        for await screen in shown.values() {
            guard let screen else { continue }
            try? await show(screen)
        }
        return nil
    }

    private func tellServerToStop() async {
        let (requestID, channel) = identity.withLock { ($0.requestID, $0.channel) }
        do {
            try await client.stop(requestID: requestID, channel: channel)
        } catch {
            logger.notice("cannot tell the agent server to stop \(channel): \(error.message)")
        }
        await ledger.ended()
    }
}
