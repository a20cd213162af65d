// SPDX-License-Identifier: GPL-2.0-or-later
import Glasses

/// One message between glassd and its own Lua app on a Brilliant Frame (or Halo): one BLE write or
/// notification each, `[0x01, code, payload…]` on the wire. The 0x01 prefix is the firmware's (data
/// for `frame.bluetooth.receive_callback`, or sent by `frame.bluetooth.send`); the codes are
/// glassd's own (frame-protocol.md: the codes belong to the app). Host → device codes are below
/// 0x80, device → host codes from 0x80. Text is UTF-8; one message never exceeds the link's data
/// payload (`FrameMTU.maxData`), so the host chunks long text itself.
///
/// The app records a question after a tap (two taps, each within 0.3 s of the last: a photo
/// first; three: the glance instead), streams its audio, and shows what the host sends; a tap
/// while a question is recorded ends the recording, a tap while an answer shows cancels it.
public enum AppMessage: Sendable, Equatable {
    // Host → device.
    /// 0x10: clear the answer area and show the text.
    case display(String)
    /// 0x11: append answer text.
    case response(String)
    /// 0x12: append text in red (an error).
    case error(String)
    /// 0x13: the answer is complete; the app waits for the next tap.
    case answerEnd
    /// 0x14: show a hazard warning; empty clears it.
    case alert(String)
    /// 0x15: stop recording now (the host heard the end of speech).
    case stopRecording
    /// 0x16: scene mode: take a photo now and stream it (sceneStart, photoData…, sceneEnd).
    case capture(PhotoSettings)
    /// 0x17: the settings of the photos taken for questions from now on.
    case photoSettings(PhotoSettings)
    /// 0x18: text of a laid-out answer's pages, appended; a form feed separates pages.
    case pageText(String)
    /// 0x19: show the pages sent (the first now; a tap turns the page).
    case pagesShow
    /// 0x1A: while idle, stream what the microphone hears (listening) or stop.
    case listen(Bool)
    /// 0x1B: the wake phrase was heard: start a question as a tap would, showing the text.
    case wake(String)
    /// 0x1C: start the speaker (Halo) for one answer: `[codec (0 PCM 16-bit, 1 LC3), kHz, volume
    /// 0…100]`, for LC3 then `[frame bytes, frame duration in 100 µs]`, and last `listen` (0 or 1):
    /// keep the microphone open meanwhile, behind the echo canceller, and send what it hears
    /// (overheard) so that the wearer's voice can stop the speech. The app answers speaking.
    case speakStart(SpeakerFormat, volume: UInt8, listen: Bool)
    /// 0x1D: stop the speaker (what was written has played, or the answer is cut); the app
    /// answers speakerStats.
    case speakStop
    /// 0x1E: the host heard the wearer speak over the answer: stop the speaker at once (as a tap
    /// does: speechCut, and cancelled while the answer still streams), and record the question.
    case bargeIn

    // Device → host.
    /// 0x81: the app runs and waits for a tap; the payload is its version.
    case ready(String)
    /// 0x82: a recording starts: PCM `[kHz, bits]`, 8 or 16 each (8-bit samples are signed,
    /// 16-bit ones signed little-endian), 8-bit µ-law `[kHz, 8, 1]`, or LC3 `[kHz, 0, frame bytes,
    /// frame duration / 100 µs]`.
    case audioStart(AudioFormat)
    /// 0x83: samples.
    case audioData([UInt8])
    /// 0x84: the recording ended.
    case audioEnd
    /// 0x85: a question's photo starts; photoData follows, then photoEnd, then the recording.
    case photoStart
    /// 0x86: JPEG bytes (of a question's photo or a scene frame).
    case photoData([UInt8])
    /// 0x87: the question's photo is complete.
    case photoEnd
    /// 0x88: a scene frame starts (asked for with capture).
    case sceneStart
    /// 0x89: the scene frame is complete.
    case sceneEnd
    /// 0x8A: the wearer cancelled the answer with a tap.
    case cancelled
    /// 0x8B: battery level in percent, when it changed.
    case battery(UInt8)
    /// 0x8C: a tap, as the IMU reported it (informational).
    case tap
    /// 0x8D: samples heard while listening for the wake phrase: 8 kHz, signed 8-bit.
    case listening([UInt8])
    /// 0x8E: whether the glasses charge, when it changed (Halo: `frame.battery_charging()`); one
    /// byte, 0 or 1.
    case charging(Bool)
    /// 0x8F: the speaker started (audio may be written to it), or could not (0); when it started
    /// listening too, the format of what it will send as overheard (as audioStart's payload).
    case speaking(Bool, overhearing: AudioFormat?)
    /// 0x90: the speaker stopped; its counters as `key=value` text (empty where the firmware
    /// keeps none).
    case speakerStats(String)
    /// 0x91: the wearer stopped the speech with a tap; the speaker is stopped.
    case speechCut
    /// 0x92: samples heard while the speaker plays (after speakStart with listen), in the format
    /// speaking gave.
    case overheard([UInt8])
    /// 0x93: the wearer asked for the glance (three taps on idle glasses; a Halo's triple tap).
    case glance

    /// The firmware's data prefix, in front of every message.
    public static let dataPrefix: UInt8 = 0x01
}

/// How the Frame's camera takes a photo (frame-protocol.md: quality 0–4, resolution 256–720, even).
public struct PhotoSettings: Sendable, Equatable {
    /// 0 (very low) … 4 (very high).
    public var quality: UInt8
    /// The square image's side in pixels, 256…720, even.
    public var resolution: UInt16

    public init(quality: UInt8 = 2, resolution: UInt16 = 512) {
        self.quality = quality
        self.resolution = resolution
    }
}
