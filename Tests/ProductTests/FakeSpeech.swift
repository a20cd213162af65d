// SPDX-License-Identifier: GPL-2.0-or-later
import Concurrency
import Glasses
import Product
import Synchronization

/// A voice in memory: sentence number n (from 1) sounds as two pieces of four bytes n, so the
/// speaker's bytes say which sentence they came from. With `hold`, each sentence's second piece
/// waits for `release`: a voice still making its audio.
final class FakeVoice: SpeechVoice {
    let asked = Mutex<[String]>([])
    let changed = Pulse()
    private let hold: Bool
    private let released = OneShotEvent()

    init(hold: Bool = false) { self.hold = hold }

    var sentences: [String] { asked.withLock { $0 } }

    func release() { released.fire() }

    func speak(_ text: String) async throws -> AsyncThrowingStream<[UInt8], any Error> {
        let number = asked.withLock { asked in
            asked.append(text)
            return UInt8(asked.count)
        }
        changed.pulse()
        let piecesGiven = Mutex(0)
        let (hold, released) = (hold, released)
        return AsyncThrowingStream {
            let piece = piecesGiven.withLock { given in
                defer { given += 1 }
                return given
            }
            guard piece < 2 else { return nil }
            if piece == 1 && hold { await released.wait() }
            return [UInt8](repeating: number, count: 4)
        }
    }

    /// Waits until the voice was asked for `count` sentences.
    func waitAsked(_ count: Int) async {
        while true {
            let ticket = changed.ticket()
            if sentences.count >= count { return }
            await changed.wait(after: ticket)
        }
    }
}

/// A speaker in memory: what was written, and for each write how many sentences the voice had
/// been asked for by then. `cutAt` makes that write (from 1) throw `SpeechCut`, as a tap would.
final class FakeSpeaker: GlassesSpeaker {
    struct Record {
        var volume: Int?
        var listen: Bool?
        var writes: [[UInt8]] = []
        /// For each write: the sentences the voice had been asked for when it came.
        var voicedAtWrite: [Int] = []
        var finished = 0
        var stopped = 0
    }

    let format = SpeakerFormat(codec: .pcm16, sampleRate: 16_000)
    let record = Mutex(Record())
    let changed = Pulse()
    private let voice: FakeVoice
    private let cutAt: Int?
    private let attempts = Mutex(0)

    init(voice: FakeVoice, cutAt: Int? = nil) {
        self.voice = voice
        self.cutAt = cutAt
    }

    var now: Record { record.withLock { $0 } }

    func begin(volume: Int, listen: Bool) async throws {
        note {
            $0.volume = volume
            $0.listen = listen
        }
    }

    func write(_ bytes: [UInt8]) async throws {
        let attempt = attempts.withLock { attempts in
            attempts += 1
            return attempts
        }
        if attempt == cutAt { throw SpeechCut() }
        let voiced = voice.sentences.count
        note {
            $0.writes.append(bytes)
            $0.voicedAtWrite.append(voiced)
        }
    }

    func finish() async throws -> SpeakerReport {
        note { $0.finished += 1 }
        return report(cut: false)
    }

    func stop() async -> SpeakerReport {
        note { $0.stopped += 1 }
        return report(cut: true)
    }

    /// Waits until `done` holds of the record.
    func wait(until done: (Record) -> Bool) async {
        while true {
            let ticket = changed.ticket()
            if record.withLock({ done($0) }) { return }
            await changed.wait(after: ticket)
        }
    }

    private func report(cut: Bool) -> SpeakerReport {
        SpeakerReport(written: now.writes.reduce(0) { $0 + $1.count }, played: .zero, cut: cut, device: "")
    }

    private func note(_ change: (inout Record) -> Void) {
        record.withLock { change(&$0) }
        changed.pulse()
    }
}
