// SPDX-License-Identifier: GPL-2.0-or-later
import Audio

/// What the glasses send for one question while it is being asked: the photo (after a hold),
/// then the audio, processed as it streams in. Owned by the loop that reads the glasses.
final class VoiceCapture {
    /// A photo bigger than this is refused (a Monocle JPEG is 20–100 KB).
    static let maxPhotoBytes = 1 << 20

    let id: String
    let recorder: UtteranceRecorder
    /// nil for a question without a photo.
    private(set) var photo: [UInt8]?
    private var photoTooLarge = false
    /// The host heard the end of speech and told the glasses to stop.
    var stopSent = false
    let started = ContinuousClock.now
    /// When the glasses last sent something for it.
    var lastHeard = ContinuousClock.now

    init(id: String, withPhoto: Bool, voice: VoiceSettings, audio: PCMInput) throws {
        self.id = id
        recorder = try UtteranceRecorder(settings: voice, input: audio)
        photo = withPhoto ? [] : nil
    }

    func appendPhoto(_ bytes: [UInt8]) {
        guard photo != nil, !photoTooLarge else { return }
        if photo!.count + bytes.count > Self.maxPhotoBytes {
            photoTooLarge = true
            photo = []
        } else {
            photo! += bytes
        }
    }

    /// The photo, checked: nil without one; throws when it is not a whole JPEG.
    func checkedPhoto() throws(VoiceFailure) -> [UInt8]? {
        guard let photo else { return nil }
        if photoTooLarge { throw .photo("larger than 1 MiB") }
        try Self.checkJPEG(photo)
        return photo
    }

    /// A whole JPEG starts with SOI (FF D8) and ends with EOI (FF D9); a truncated one does not.
    static func checkJPEG(_ bytes: [UInt8]) throws(VoiceFailure) {
        guard bytes.count >= 4 else { throw .photo(bytes.isEmpty ? "no photo arrived" : "too short") }
        guard bytes[0] == 0xFF && bytes[1] == 0xD8 else { throw .photo("not a JPEG") }
        guard bytes[bytes.count - 2] == 0xFF && bytes[bytes.count - 1] == 0xD9 else { throw .photo("truncated") }
    }
}
