// SPDX-License-Identifier: GPL-2.0-or-later
import Concurrency
import Glasses
import Logging
import Synchronization

/// An answer spoken on the glasses' speaker as it streams: each sentence goes to the voice as
/// soon as it ends, so the first plays while the model still writes the next. The voice works at
/// most one sentence ahead of the speaker (a cut answer wastes little), and audio is written as
/// the voice makes it, paced by the speaker.
public final class SpokenAnswer: Sendable {
    private struct State {
        var splitter = SentenceSplitter()
        /// Sentences not yet given to the voice.
        var queued: [String] = []
        var finished = false
        var cancelled = false
        /// The wearer stopped it (a tap, the next question), not a failure.
        var cutByWearer = false
        /// Sentences the voice has begun.
        var voiced = 0
        /// The sentences begun, each with the speaker's bytes written before it.
        var spoken: [(text: String, start: Int)] = []
        /// The speaker's bytes written.
        var written = 0
        /// When the first sentence ended (in the stream, or with it), and when its first audio
        /// was written to the speaker: the part of the delay before the wearer hears anything
        /// that is glassd's and the voice's.
        var firstSentence: ContinuousClock.Instant?
        var firstWrite: ContinuousClock.Instant?
    }

    private let state = Mutex(State())
    private let changed = Pulse()
    private let done = OneShotEvent()
    private let speaker: any GlassesSpeaker
    private let voice: any SpeechVoice
    private let volume: Int
    /// The glasses listen while they speak, so that the wearer's voice can cut the answer.
    private let listen: Bool
    private let logger: Logger

    public init(speaker: any GlassesSpeaker, voice: any SpeechVoice, volume: Int, listen: Bool = false, logger: Logger) {
        self.speaker = speaker
        self.voice = voice
        self.volume = volume
        self.listen = listen
        self.logger = logger
    }

    /// Adds a piece of the answer's text.
    public func append(_ piece: String) {
        state.withLock { s in
            guard !s.finished else { return }
            s.queued += s.splitter.feed(piece)
            if s.firstSentence == nil, !s.queued.isEmpty { s.firstSentence = .now }
        }
        changed.pulse()
    }

    /// The answer's text is complete: its last words are spoken too.
    public func finish() {
        state.withLock { s in
            guard !s.finished else { return }
            s.finished = true
            if let rest = s.splitter.finish() { s.queued.append(rest) }
            if s.firstSentence == nil, !s.queued.isEmpty { s.firstSentence = .now }
        }
        changed.pulse()
    }

    /// Stops speaking at once (the answer failed).
    public func cancel() {
        state.withLock { $0.cancelled = true }
        changed.pulse()
    }

    /// Stops speaking at once: the wearer cut it off (the next question, or a tap).
    public func cutByWearer() {
        state.withLock { s in
            s.cancelled = true
            s.cutByWearer = true
        }
        changed.pulse()
    }

    /// Whether the wearer cut the speech off (a tap on the glasses, or `cutByWearer`).
    public var wasCutByWearer: Bool { state.withLock { $0.cutByWearer } }

    /// From the end of the first sentence to its first audio written to the speaker.
    public var firstAudioDelay: Duration? {
        state.withLock { s in s.firstSentence.flatMap { start in s.firstWrite.map { start.duration(to: $0) } } }
    }

    /// When the first audio was written to the speaker; nil until then.
    public var firstAudio: ContinuousClock.Instant? { state.withLock { $0.firstWrite } }

    /// The sentences begun on the speaker.
    public var spoken: [String] { state.withLock { $0.spoken.map(\.text) } }

    /// What the wearer heard by the time the speaker stopped, by the audio it played: whole
    /// sentences, then the words of the one it stopped in, in the share of its audio played.
    public func said(_ report: SpeakerReport) -> String {
        let rate = Double(speaker.format.bytesPerSecond)
        let played = Int(
            report.played / .seconds(1) * rate)
        return state.withLock { s in
            var out: [String] = []
            for (i, sentence) in s.spoken.enumerated() {
                let end = i + 1 < s.spoken.count ? s.spoken[i + 1].start : s.written
                if played >= end {
                    out.append(sentence.text)
                    continue
                }
                let share = end > sentence.start ? Double(played - sentence.start) / Double(end - sentence.start) : 0
                let words = sentence.text.split(separator: " ")
                let heard = Int((Double(words.count) * max(0, share)).rounded(.down))
                if heard > 0 { out.append(words.prefix(heard).joined(separator: " ")) }
                break
            }
            return out.joined(separator: " ")
        }
    }

    /// Returns once `run` has ended.
    public func ended() async { await done.wait() }

    /// Speaks until the answer is done or cut; the speaker's report, or nil when nothing was
    /// said (no words, or the speaker did not start).
    public func run() async -> SpeakerReport? {
        defer { done.fire() }
        let (sentences, sink) = AsyncStream.makeStream(of: (String, AsyncThrowingStream<[UInt8], any Error>).self)
        enum Ended: Sendable {
            case voice
            case player(SpeakerReport?)
        }
        return await withTaskGroup(of: Ended.self) { group in
            group.addTask {
                await self.voiceSentences(into: sink)
                return .voice
            }
            group.addTask { .player(await self.play(sentences)) }
            var report: SpeakerReport?
            for await ended in group {
                guard case .player(let result) = ended else { continue }
                report = result
                group.cancelAll()  // the player ended (cut, or failed): the voice stops too
            }
            return report
        }
    }

    /// The log line of a spoken answer: what was written and played, the first sentence's end to
    /// its first audio written (`first_audio_ms`), and the glasses' counters (a byte the speaker
    /// refused, `ble_rejected_bytes`, is audio lost).
    public func log(_ report: SpeakerReport, logger: Logger) {
        func seconds(_ d: Duration) -> Double { d / .seconds(1) }
        logger.info(
            "answer spoken",
            metadata: [
                "bytes": "\(report.written)", "played_s": "\((seconds(report.played) * 100).rounded() / 100)",
                "cut": "\(report.cut)", "first_audio_ms": "\(firstAudioDelay.map { "\(Int(seconds($0) * 1000))" } ?? "-")",
                "speaker": "\(report.device.isEmpty ? "-" : report.device)",
            ])
    }

    /// Gives each sentence to the voice once the speaker has begun the one before it.
    private func voiceSentences(into sink: AsyncStream<(String, AsyncThrowingStream<[UInt8], any Error>)>.Continuation) async {
        defer { sink.finish() }
        while !Task.isCancelled {
            let ticket = changed.ticket()
            enum Next { case sentence(String), wait, done }
            let next = state.withLock { s -> Next in
                if s.cancelled { return .done }
                guard s.voiced <= s.spoken.count else { return .wait }
                if !s.queued.isEmpty {
                    s.voiced += 1
                    return .sentence(s.queued.removeFirst())
                }
                return s.finished ? .done : .wait
            }
            switch next {
            case .done: return
            case .wait: await changed.wait(after: ticket)
            case .sentence(let text):
                do {
                    sink.yield((text, try await voice.speak(text)))
                } catch {
                    if !(error is SpeechVoiceOff) { logger.info("the answer cannot be spoken: \(error)") }
                    return
                }
            }
        }
    }

    /// Writes each sentence's audio to the speaker as it comes.
    private func play(_ sentences: AsyncStream<(String, AsyncThrowingStream<[UInt8], any Error>)>) async -> SpeakerReport? {
        var started = false
        do {
            let encoding = try SpeakerEncoding(speaker.format)
            for await (text, audio) in sentences {
                if state.withLock({ $0.cancelled }) { break }
                if !started {
                    try await speaker.begin(volume: volume, listen: listen)
                    started = true
                }
                state.withLock { s in
                    s.spoken.append((text, s.written))
                }
                changed.pulse()
                for try await pcm in audio {
                    if state.withLock({ $0.cancelled }) { break }
                    let bytes = encoding.encode(pcm)
                    if !bytes.isEmpty {
                        try await speaker.write(bytes)
                        state.withLock { s in
                            s.written += bytes.count
                            if s.firstWrite == nil { s.firstWrite = .now }
                        }
                    }
                }
            }
            guard started else { return nil }
            if state.withLock({ $0.cancelled }) || Task.isCancelled { return await speaker.stop() }
            let last = encoding.finish()
            if !last.isEmpty { try await speaker.write(last) }
            return try await speaker.finish()
        } catch is SpeechCut {
            state.withLock { $0.cutByWearer = true }
            return await speaker.stop()
        } catch {
            if !(error is CancellationError) { logger.info("speaking the answer failed: \(error)") }
            return started ? await speaker.stop() : nil
        }
    }
}
