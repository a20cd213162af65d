// SPDX-License-Identifier: GPL-2.0-or-later
import AnswerModel
import AssistantEngine
import Audio
import Concurrency
import Foundation
import GlassdAPI
import Glasses
import Logging
import Synchronization

/// Questions asked on the glasses: a tap records one (a hold takes a photo first). The audio is
/// processed as it streams in, and the glasses are told to stop as soon as the speaker has: at a
/// short pause the words so far are transcribed (eagerly), and if they read as a finished
/// sentence the turn ends there, else after the long silence (`VoiceSettings`). Then it is
/// transcribed (or the eager transcript is used, when nothing was said after it), answered with
/// the conversation so far (or, in translator mode, the translation is the answer), and the
/// answer is shown on the glasses word by word as it streams. A tap meanwhile cancels it.
public struct VoiceQueries<C: Clock>: Sendable where C.Duration == Duration {
    public enum Input: Sendable {
        case glasses(GlassesEvent)
        case status(SessionStatus)
        /// Time to look whether the capture `id` still hears from the glasses (internal).
        case watch(String)
        /// The capture `id`'s eager transcript number N is back, or failed (internal).
        case eager(String, Int)
    }

    /// A capture the glasses stop feeding (no data this long, or beyond the longest question by
    /// this much) ends as failed: broken or hostile glasses cannot keep glassd recording.
    static var silentGlasses: Duration { .seconds(10) }

    /// Stray recordings are stopped at most this often.
    static var strayPause: Duration { .seconds(2) }

    /// Bound on an eager transcription: past it the usual request at the end is as quick.
    static var eagerTimeout: Duration { .seconds(15) }

    /// The question stored for a translation (the speech itself is not transcribed).
    static var spokenQuestion: String { "(spoken, translated to English)" }

    let session: any GlassesSession
    let assistant: Assistant
    let transcriber: TranscriptionClient?
    let transcriptions: any TranscriptionRecords
    let photos: any PhotoKeeping
    let signals: any QueryEvents
    let mode: ModeSetting
    let voice: VoiceSettings
    let visionModel: String?
    let abilities: BackendAbilities
    /// The paired glasses' address, for the transcription rows.
    let device: @Sendable () async -> String?
    /// Scene mode: the newest frame, which a tap's question is about.
    let latestSceneFrame: @Sendable () async -> [UInt8]?
    let logger: Logger
    var now: @Sendable () -> Int64 = { Int64(Date().timeIntervalSince1970 * 1000) }
    /// Times the glasses' captures (the watchdog).
    let clock: C
    /// Answers are spoken too on glasses with a speaker; nil: never.
    var speech: SpeechOut?
    /// Where each turn's timeline is kept; nil: nowhere.
    var turns: (any TurnRecords)?

    public init(
        session: any GlassesSession, assistant: Assistant, transcriber: TranscriptionClient?,
        transcriptions: any TranscriptionRecords, photos: any PhotoKeeping, signals: any QueryEvents, mode: ModeSetting,
        voice: VoiceSettings, visionModel: String?, abilities: BackendAbilities,
        device: @escaping @Sendable () async -> String?, latestSceneFrame: @escaping @Sendable () async -> [UInt8]?,
        clock: C, logger: Logger, speech: SpeechOut? = nil, turns: (any TurnRecords)? = nil
    ) {
        self.clock = clock
        self.speech = speech
        self.turns = turns
        self.session = session
        self.assistant = assistant
        self.transcriber = transcriber
        self.transcriptions = transcriptions
        self.photos = photos
        self.signals = signals
        self.mode = mode
        self.voice = voice
        self.visionModel = visionModel
        self.abilities = abilities
        self.device = device
        self.latestSceneFrame = latestSceneFrame
        self.logger = logger
    }

    /// Handles what the glasses send until `inputs` ends.
    public func run(_ inputs: AsyncStream<Input>) async {
        // The glasses' inputs and the capture watchdog's, in one stream.
        let (merged, sink) = AsyncStream.makeStream(of: Input.self)
        await withDiscardingTaskGroup { group in
            group.addTask {
                for await input in inputs { sink.yield(input) }
                sink.finish()
            }
            var capture: VoiceCapture<C>?
            var answering: OneShotEvent?
            /// What the glasses overhear while they speak, until a question starts or the next answer does.
            var ear = OverheardEar<C>()
            var generation: UInt64 = 0
            /// Told the glasses to stop a recording no capture owns, and when.
            var strayStopped = false
            var lastStray: C.Instant?
            /// When `capture` is given up unless the glasses send more of it.
            func deadline(_ capture: VoiceCapture<C>) -> C.Instant {
                min(
                    capture.lastHeard.advanced(by: Self.silentGlasses),
                    capture.started.advanced(by: voice.maximumLength + Self.silentGlasses))
            }
            /// What a capture's audio did: a pause asks for the words so far, a longer one ends a
            /// statement, speech after it drops them, and at the end of speech the glasses are
            /// told to stop.
            func heard(_ capture: VoiceCapture<C>, _ events: [UtteranceEvent]) {
                for event in events {
                    switch event {
                    case .paused:
                        capture.pausedAt = .now
                        startEager(capture)
                    case .pausedLong:
                        capture.pausedLong = true
                        if capture.eagerEnding == .statement { endEarly(capture) }
                    case .resumed:
                        capture.pausedAt = nil
                        capture.pausedLong = false
                        capture.dropEager()
                    case .ended: endTurn(capture)
                    case .speechStarted: break
                    }
                }
            }
            /// The wearer is done: the glasses are told to stop, once. Their speech ended where
            /// the pause before began to be heard.
            func endTurn(_ capture: VoiceCapture<C>) {
                guard !capture.stopSent else { return }
                capture.timeline.mark(.speechEnd, at: capture.pausedAt ?? .now)
                capture.stopSent = true
                let id = capture.id
                group.addTask { await stopRecording(id) }
            }
            /// The words before the pause, sent for transcription while the glasses still record;
            /// not for a question that will fail before its transcription (one with a photo, or in
            /// scene mode, for a backend that cannot see), nor for a translation.
            func startEager(_ capture: VoiceCapture<C>) {
                guard let transcriber, abilities.hears, mode.mode != .translator, !capture.stopSent else { return }
                guard abilities.sees || !(capture.withPhoto || mode.mode == .scene) else { return }
                let utterance = capture.recorder.snapshot()
                guard utterance.hasSpeech else { return }
                capture.dropEager()
                capture.eagerRequests += 1
                let eager = EagerTranscript(number: capture.eagerRequests)
                capture.eager = eager
                let (id, client, wav) = (capture.id, transcriber.once(within: Self.eagerTimeout), utterance.wav())
                group.addTask {
                    await eager.run(client, wav: wav)
                    sink.yield(.eager(id, eager.number))
                }
            }
            /// An eager transcript is back: a question ends the turn, a statement does once the
            /// pause is long enough; a failure leaves it to the usual request at the end.
            func eagerBack(_ capture: VoiceCapture<C>, _ eager: EagerTranscript) {
                guard let text = eager.text else {
                    capture.eager = nil
                    return
                }
                let ending = SentenceEnd(text, language: transcriber?.config.language)
                capture.eagerEnding = ending
                logger.debug(
                    "eager transcript back", metadata: ["query_id": "\(capture.id)", "ending": "\(ending)"])
                if ending == .question || (ending == .statement && capture.pausedLong) { endEarly(capture) }
            }
            /// The words so far are the question: the recording ends now, not at the long silence.
            func endEarly(_ capture: VoiceCapture<C>) {
                capture.recorder.finishNow()
                endTurn(capture)
            }
            func watch(_ current: VoiceCapture<C>) {
                let deadline = deadline(current)
                let id = current.id
                group.addTask {
                    try? await clock.sleep(until: deadline, tolerance: nil)
                    sink.yield(.watch(id))
                }
            }
            for await input in merged {
                if case .glasses(let event) = input, let current = capture {
                    switch event {
                    case .photoData, .audio, .photoEnd: current.lastHeard = clock.now
                    default: break
                    }
                }
                switch input {
                case .watch(let id):
                    guard let current = capture, current.id == id else { break }
                    if clock.now < deadline(current) {
                        watch(current)  // heard from since: look again at the new deadline
                        break
                    }
                    capture = nil
                    current.dropEager()
                    fail(id, VoiceFailure.recordingNeverEnded)
                    group.addTask { await abandonRecording(id) }
                case .eager(let id, let number):
                    guard let current = capture, current.id == id, let eager = current.eager, eager.number == number
                    else { break }
                    eagerBack(current, eager)
                case .status(let status):
                    let gone = status.generation != generation || !(status.state == .ready || status.state == .busy)
                    if gone, let lost = capture {
                        capture = nil
                        lost.dropEager()
                        fail(lost.id, VoiceFailure.disconnected(while: "recording"))
                    }
                    generation = status.generation
                case .glasses(let event):
                    switch event {
                    case .questionStart(let photo, let audio):
                        strayStopped = false
                        if let replaced = capture {
                            replaced.dropEager()
                            fail(replaced.id, VoiceFailure.disconnected(while: "recording"))
                        }
                        capture = start(photo: photo, audio: audio)
                        if let started = capture {
                            watch(started)
                            // The question the wearer began over the answer keeps its first words.
                            if let said = ear.question(started.recorder.input, at: clock.now) {
                                heard(started, started.recorder.append(samples: said))
                            }
                        }
                        ear.forget()
                    case .photoData(let bytes):
                        capture?.appendPhoto(bytes)
                    case .photoEnd:
                        break  // the spoken question follows
                    case .audio(let bytes):
                        guard let current = capture else {
                            // A recording nobody owns (an agent session that ended during it): stopped,
                            // at most once in `strayPause`, so garbage from the glasses costs no more.
                            if !strayStopped, lastStray.map({ clock.now >= $0.advanced(by: Self.strayPause) }) ?? true {
                                strayStopped = true
                                lastStray = clock.now
                                group.addTask { try? await session.stopRecording() }
                            }
                            break
                        }
                        heard(current, current.recorder.append(bytes))
                    case .audioEnd:
                        guard let done = capture else {
                            // The end of a recording nobody owns: the glasses wait for an answer
                            // that will not come (given for a stray recording stopped, else as
                            // rarely as the stops are).
                            let due = lastStray.map { clock.now >= $0.advanced(by: Self.strayPause) } ?? true
                            if strayStopped || due {
                                if !strayStopped { lastStray = clock.now }
                                group.addTask { await session.giveEmptyAnswer() }
                            }
                            strayStopped = false
                            break
                        }
                        capture = nil
                        done.timeline.mark(.speechEnd, at: done.pausedAt ?? .now)  // unless glassd heard it end before
                        let utterance = done.recorder.finish()
                        // Valid: speech after it would have dropped it.
                        let eager = EagerUse(transcript: done.eager, requests: done.eagerRequests)
                        let photo = Result { () throws(VoiceFailure) in try done.checkedPhoto() }
                        let cancel = OneShotEvent()
                        answering?.fire()  // an earlier answer still streaming gives way
                        answering = cancel
                        ear.forget()  // the new answer's is heard afresh
                        let (id, timeline) = (done.id, done.timeline)
                        group.addTask {
                            await answer(id, utterance: utterance, eager: eager, photo: photo, cancel: cancel, timeline: timeline)
                        }
                    case .cancelled:
                        answering?.fire()
                        answering = nil
                    case .overheard(let bytes, let format):
                        // The wearer speaks over the answer: it stops, and what they say is the next question.
                        guard ear.hear(bytes, format: format, at: clock.now, logger: logger) else { break }
                        answering?.fire()
                        answering = nil
                        group.addTask { await bargeIn() }
                    case .sceneFrame, .tap, .listening, .glance:
                        break
                    }
                }
            }
            answering?.fire()
            group.cancelAll()  // the watchdog's sleepers
        }
    }

    private func bargeIn() async {
        do {
            try await session.bargeIn()
        } catch {
            logger.info("cannot stop the glasses' speech: \(error)")
        }
    }

    /// A recording the glasses never ended: they are told to stop, and are ready again.
    private func abandonRecording(_ id: String) async {
        do {
            try await session.stopRecording()
        } catch {
            logger.info("cannot tell the glasses to stop recording: \(error)", metadata: ["query_id": "\(id)"])
        }
        await session.answerFinished()
    }

    private func start(photo: Bool, audio: AudioFormat) -> VoiceCapture<C>? {
        let id = glassdGlassesQueryID(UUID().uuidString.lowercased())
        do {
            return try VoiceCapture(id: id, withPhoto: photo, voice: voice, audio: PCMInput(audio), now: clock.now)
        } catch {
            fail(id, AssistantError.internalFailure("The audio processing could not start: \(error)."))
            return nil
        }
    }

    /// Whether a transcript holds no words: empty, or only markers such as whisper.cpp's
    /// "[BLANK_AUDIO]" or "(silence)" and punctuation.
    static func heardNothing(_ text: String) -> Bool {
        var depth = 0
        for character in text {
            switch character {
            case "[", "(": depth += 1
            case "]", ")": depth = max(0, depth - 1)
            default: if depth == 0 && (character.isLetter || character.isNumber) { return false }
            }
        }
        return true
    }

    private func stopRecording(_ id: String) async {
        logger.debug("end of speech heard: stopping the recording", metadata: ["query_id": "\(id)"])
        do {
            try await session.stopRecording()
        } catch {
            logger.info("cannot tell the glasses to stop recording: \(error)", metadata: ["query_id": "\(id)"])
        }
    }

    func fail(_ id: String, _ error: any Error) {
        logger.notice("question from the glasses failed", metadata: ["query_id": "\(id)", "error": "\(error)"])
        signals.failed(id, error)
    }

}

extension PCMInput {
    /// As the glasses describe their recording.
    init(_ format: AudioFormat) throws(AudioError) {
        try self.init(sampleRate: format.sampleRate, bits: format.bits, lc3Frame: format.lc3Frame, muLaw: format.isMuLaw)
    }
}
