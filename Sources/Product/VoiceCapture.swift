// SPDX-License-Identifier: GPL-2.0-or-later
import Audio
import Glasses

/// What the glasses send for one question while it is being asked: the photo (after a hold),
/// then the audio, processed as it streams in. Owned by the loop that reads the glasses.
final class VoiceCapture<C: Clock> where C.Duration == Duration {
    let id: String
    let recorder: UtteranceRecorder
    /// nil for a question without a photo; bounded (`PhotoAssembly.maxBytes`).
    private var photo: PhotoAssembly?
    /// The host heard the end of speech and told the glasses to stop.
    var stopSent = false
    let started: C.Instant
    /// When the glasses last sent something for it.
    var lastHeard: C.Instant
    /// The turn's stages, from now (the glasses began sending it).
    let timeline = TurnTimeline()
    /// When the pause going on now was heard; nil while the wearer speaks.
    var pausedAt: ContinuousClock.Instant?
    /// The transcript of what was said before the pause going on now, if one was asked for.
    var eager: EagerTranscript?
    /// How its words end, once it is back.
    var eagerEnding: SentenceEnd?
    /// The pause going on now has lasted the statement silence.
    var pausedLong = false
    /// Eager transcripts asked for (each costs a request).
    var eagerRequests = 0

    init(id: String, withPhoto: Bool, voice: VoiceSettings, audio: PCMInput, now: C.Instant) throws {
        self.id = id
        started = now
        lastHeard = now
        recorder = try UtteranceRecorder(settings: voice, input: audio)
        if withPhoto {
            var assembly = PhotoAssembly()
            assembly.start()
            photo = assembly
        }
    }

    /// The eager transcript is no longer the question's: its request is cancelled.
    func dropEager() {
        eager?.drop()
        eager = nil
        eagerEnding = nil
    }

    /// A hold's question: a photo goes with it.
    var withPhoto: Bool { photo != nil }

    func appendPhoto(_ bytes: [UInt8]) {
        photo?.append(bytes)
    }

    /// The photo, checked: nil without one; throws when it is not a whole JPEG. Once only.
    func checkedPhoto() throws(VoiceFailure) -> [UInt8]? {
        guard let finished = photo?.finish() else { return nil }
        guard let bytes = finished else { throw .photo("larger than 1 MiB") }
        try Self.checkJPEG(bytes)
        return bytes
    }

    /// A whole JPEG starts with SOI (FF D8) and ends with EOI (FF D9); a truncated one does not.
    static func checkJPEG(_ bytes: [UInt8]) throws(VoiceFailure) {
        guard bytes.count >= 4 else { throw .photo(bytes.isEmpty ? "no photo arrived" : "too short") }
        guard bytes[0] == 0xFF && bytes[1] == 0xD8 else { throw .photo("not a JPEG") }
        guard bytes[bytes.count - 2] == 0xFF && bytes[bytes.count - 1] == 0xD9 else { throw .photo("truncated") }
    }
}
