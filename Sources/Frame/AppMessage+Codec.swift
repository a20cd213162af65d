// SPDX-License-Identifier: GPL-2.0-or-later
import Glasses

/// The wire form of `AppMessage`: `[0x01, code, payload…]`. Payloads: text is UTF-8 (may be
/// empty); `audioStart` is `[kHz, bits]` (8 or 16 each; the Swift value holds the rate in Hz), or
/// for LC3 `[kHz, 0, frame bytes (20 or more), frame duration in 100 µs (75 or 100)]`;
/// `speaking` is `[0]`, `[1]`, or `[1]` and the overheard audio's format as audioStart's;
/// `audioData`/`photoData`/`listening`/`overheard` are raw bytes (at least one); `listen` and `charging` are one byte, 0 or 1; `battery` is one byte, 0…100;
/// `capture`/`photoSettings` are `[quality, resolution high byte, resolution low byte]`
/// (quality 0…4, resolution 256…720 and even); every other message has no payload. Decoding is
/// strict: whatever the app or host would not send is an error, never a guess.
extension AppMessage {
    /// The message's code (host → device below 0x80, device → host from 0x80).
    public var code: UInt8 {
        switch self {
        case .display: 0x10
        case .response: 0x11
        case .error: 0x12
        case .answerEnd: 0x13
        case .alert: 0x14
        case .stopRecording: 0x15
        case .capture: 0x16
        case .photoSettings: 0x17
        case .pageText: 0x18
        case .pagesShow: 0x19
        case .listen: 0x1A
        case .wake: 0x1B
        case .speakStart: 0x1C
        case .speakStop: 0x1D
        case .bargeIn: 0x1E
        case .ready: 0x81
        case .audioStart: 0x82
        case .audioData: 0x83
        case .audioEnd: 0x84
        case .photoStart: 0x85
        case .photoData: 0x86
        case .photoEnd: 0x87
        case .sceneStart: 0x88
        case .sceneEnd: 0x89
        case .cancelled: 0x8A
        case .battery: 0x8B
        case .tap: 0x8C
        case .listening: 0x8D
        case .charging: 0x8E
        case .speaking: 0x8F
        case .speakerStats: 0x90
        case .speechCut: 0x91
        case .overheard: 0x92
        case .glance: 0x93
        }
    }

    /// A short name for logs.
    public var name: String { Self.name(of: code) ?? "unknown" }

    static func name(of code: UInt8) -> String? {
        switch code {
        case 0x10: "display"
        case 0x11: "response"
        case 0x12: "error"
        case 0x13: "answerEnd"
        case 0x14: "alert"
        case 0x15: "stopRecording"
        case 0x16: "capture"
        case 0x17: "photoSettings"
        case 0x18: "pageText"
        case 0x19: "pagesShow"
        case 0x1A: "listen"
        case 0x1B: "wake"
        case 0x1C: "speakStart"
        case 0x1D: "speakStop"
        case 0x1E: "bargeIn"
        case 0x81: "ready"
        case 0x82: "audioStart"
        case 0x83: "audioData"
        case 0x84: "audioEnd"
        case 0x85: "photoStart"
        case 0x86: "photoData"
        case 0x87: "photoEnd"
        case 0x88: "sceneStart"
        case 0x89: "sceneEnd"
        case 0x8A: "cancelled"
        case 0x8B: "battery"
        case 0x8C: "tap"
        case 0x8D: "listening"
        case 0x8E: "charging"
        case 0x8F: "speaking"
        case 0x90: "speakerStats"
        case 0x91: "speechCut"
        case 0x92: "overheard"
        case 0x93: "glance"
        default: nil
        }
    }

    /// The bytes of one write or notification, the 0x01 prefix included.
    public var encoded: [UInt8] {
        [Self.dataPrefix, code] + payload
    }

    private var payload: [UInt8] {
        switch self {
        case .display(let s), .response(let s), .error(let s), .alert(let s), .ready(let s), .pageText(let s), .wake(let s),
            .speakerStats(let s):
            Array(s.utf8)
        case .listen(let on): [on ? 1 : 0]
        case .capture(let settings), .photoSettings(let settings): settings.encoded
        case .audioStart(let format): format.encoded
        case .audioData(let bytes), .photoData(let bytes), .listening(let bytes), .overheard(let bytes): bytes
        case .battery(let level): [level]
        case .charging(let on): [on ? 1 : 0]
        case .speaking(let on, let overhearing): [on ? 1 : 0] + (overhearing?.encoded ?? [])
        case .speakStart(let format, let volume, let listen):
            switch format.codec {
            case .pcm16: [0, UInt8(clamping: format.sampleRate / 1000), volume, listen ? 1 : 0]
            case .lc3(let frameBytes, let frameMicros):
                [
                    1, UInt8(clamping: format.sampleRate / 1000), volume, UInt8(clamping: frameBytes),
                    UInt8(clamping: frameMicros / 100), listen ? 1 : 0,
                ]
            }
        case .answerEnd, .stopRecording, .audioEnd, .photoStart, .photoEnd, .sceneStart, .sceneEnd, .cancelled, .tap,
            .pagesShow, .speakStop, .speechCut, .bargeIn, .glance:
            []
        }
    }

    /// Why a frame could not be decoded.
    public enum DecodeError: Error, Sendable, Equatable {
        /// Fewer than the two bytes of prefix and code.
        case tooShort(Int)
        /// The first byte is not the 0x01 data prefix (print text, or garbage).
        case missingPrefix(UInt8)
        case unknownCode(UInt8)
        /// The payload does not fit the code (its name).
        case badPayload(String)

        /// What went wrong, without the frame's bytes: one of a few kinds, for rate-limited logs.
        public var kind: String {
            switch self {
            case .tooShort: "a frame too short"
            case .missingPrefix: "a frame without the data prefix"
            case .unknownCode: "an unknown code"
            case .badPayload(let name): "a bad \(name) payload"
            }
        }
    }

    /// Decodes one frame (either direction), the 0x01 prefix included.
    public static func decode(_ frame: [UInt8]) throws(DecodeError) -> AppMessage {
        guard frame.count >= 2 else { throw .tooShort(frame.count) }
        guard frame[0] == dataPrefix else { throw .missingPrefix(frame[0]) }
        let code = frame[1]
        guard let name = name(of: code) else { throw .unknownCode(code) }
        let payload = Array(frame[2...])
        func text() throws(DecodeError) -> String {
            guard let s = String(validating: payload, as: UTF8.self) else { throw .badPayload(name) }
            return s
        }
        func empty(_ message: AppMessage) throws(DecodeError) -> AppMessage {
            guard payload.isEmpty else { throw .badPayload(name) }
            return message
        }
        func bytes() throws(DecodeError) -> [UInt8] {
            guard !payload.isEmpty else { throw .badPayload(name) }
            return payload
        }
        func settings() throws(DecodeError) -> PhotoSettings {
            guard let settings = PhotoSettings(encoded: payload) else { throw .badPayload(name) }
            return settings
        }
        switch code {
        case 0x10: return .display(try text())
        case 0x11: return .response(try text())
        case 0x12: return .error(try text())
        case 0x13: return try empty(.answerEnd)
        case 0x14: return .alert(try text())
        case 0x15: return try empty(.stopRecording)
        case 0x16: return .capture(try settings())
        case 0x17: return .photoSettings(try settings())
        case 0x18: return .pageText(try text())
        case 0x19: return try empty(.pagesShow)
        case 0x1A:
            guard payload == [0] || payload == [1] else { throw .badPayload(name) }
            return .listen(payload == [1])
        case 0x1B: return .wake(try text())
        case 0x1C:
            guard let message = speakStart(payload) else { throw .badPayload(name) }
            return message
        case 0x1D: return try empty(.speakStop)
        case 0x1E: return try empty(.bargeIn)
        case 0x81:
            let version = try text()
            guard !version.isEmpty else { throw .badPayload(name) }
            return .ready(version)
        case 0x82:
            guard let format = AudioFormat(encoded: payload[...]) else { throw .badPayload(name) }
            return .audioStart(format)
        case 0x83: return .audioData(try bytes())
        case 0x84: return try empty(.audioEnd)
        case 0x85: return try empty(.photoStart)
        case 0x86: return .photoData(try bytes())
        case 0x87: return try empty(.photoEnd)
        case 0x88: return try empty(.sceneStart)
        case 0x89: return try empty(.sceneEnd)
        case 0x8A: return try empty(.cancelled)
        case 0x8B:
            guard payload.count == 1, payload[0] <= 100 else { throw .badPayload(name) }
            return .battery(payload[0])
        case 0x8C: return try empty(.tap)
        case 0x8D: return .listening(try bytes())
        case 0x8E:
            guard payload.count == 1, payload[0] <= 1 else { throw .badPayload(name) }
            return .charging(payload[0] == 1)
        case 0x8F:
            switch payload.count {
            case 1 where payload[0] <= 1: return .speaking(payload[0] == 1, overhearing: nil)
            case 2...:
                guard payload[0] == 1, let format = AudioFormat(encoded: payload[1...]) else { throw .badPayload(name) }
                return .speaking(true, overhearing: format)
            default: throw .badPayload(name)
            }
        case 0x90: return .speakerStats(try text())
        case 0x91: return try empty(.speechCut)
        case 0x92: return .overheard(try bytes())
        case 0x93: return try empty(.glance)
        default: throw .unknownCode(code)
        }
    }
}

extension PhotoSettings {
    /// The valid range of `quality` (very low … very high).
    public static let qualities: ClosedRange<UInt8> = 0...4
    /// The valid range of `resolution` (even values only).
    public static let resolutions: ClosedRange<UInt16> = 256...720

    /// Whether the camera accepts these settings.
    public var isValid: Bool {
        Self.qualities.contains(quality) && Self.resolutions.contains(resolution) && resolution % 2 == 0
    }

    /// `[quality, resolution high byte, resolution low byte]`.
    var encoded: [UInt8] { [quality, UInt8(resolution >> 8), UInt8(resolution & 0xFF)] }

    /// nil unless three bytes of valid settings.
    init?(encoded bytes: [UInt8]) {
        guard bytes.count == 3 else { return nil }
        let settings = PhotoSettings(quality: bytes[0], resolution: UInt16(bytes[1]) << 8 | UInt16(bytes[2]))
        guard settings.isValid else { return nil }
        self = settings
    }
}

extension AppMessage {
    /// speakStart's payload: PCM `[0, kHz, volume, listen]` or LC3 `[1, kHz, volume, frame bytes,
    /// frame duration / 100 µs, listen]`, 8 or 16 kHz, volume 0…100, LC3 frames of 20 bytes or
    /// more, 7.5 or 10 ms, listen 0 or 1.
    fileprivate static func speakStart(_ p: [UInt8]) -> AppMessage? {
        guard p.count >= 4, p[1] == 8 || p[1] == 16, p[2] <= 100, let listen = p.last, listen <= 1 else { return nil }
        let rate = Int(p[1]) * 1000
        switch (p[0], p.count) {
        case (0, 4): return .speakStart(SpeakerFormat(codec: .pcm16, sampleRate: rate), volume: p[2], listen: listen == 1)
        case (1, 6) where p[3] >= 20 && (p[4] == 75 || p[4] == 100):
            let codec = SpeakerFormat.Codec.lc3(frameBytes: Int(p[3]), frameMicros: Int(p[4]) * 100)
            return .speakStart(SpeakerFormat(codec: codec, sampleRate: rate), volume: p[2], listen: listen == 1)
        default: return nil
        }
    }
}

extension AudioFormat {
    /// As audioStart (and speaking) carry it: PCM `[kHz, bits]` (8 or 16 each), 8-bit µ-law
    /// `[kHz, 8, 1]` (a third byte the two-byte form lacks, so older apps still read as before), or
    /// LC3 `[kHz, 0, frame bytes (20 or more), frame duration / 100 µs (75 or 100)]`.
    var encoded: [UInt8] {
        let khz = UInt8(clamping: sampleRate / 1000)
        return switch codec {
        case .pcm: [khz, UInt8(clamping: bits)]
        case .muLaw: [khz, 8, 1]
        case .lc3(let frameBytes, let frameMicros): [khz, 0, UInt8(clamping: frameBytes), UInt8(clamping: frameMicros / 100)]
        }
    }

    /// nil for anything the app would not send.
    init?(encoded p: ArraySlice<UInt8>) {
        let p = Array(p)
        guard p.count >= 2, p[0] == 8 || p[0] == 16 else { return nil }
        let rate = Int(p[0]) * 1000
        switch p.count {
        case 2 where p[1] == 8 || p[1] == 16: self.init(sampleRate: rate, bits: Int(p[1]))
        case 3 where p[1] == 8 && p[2] == 1: self.init(sampleRate: rate, bits: 8, codec: .muLaw)
        case 4 where p[1] == 0 && p[2] >= 20 && (p[3] == 75 || p[3] == 100):
            self.init(sampleRate: rate, bits: 16, codec: .lc3(frameBytes: Int(p[2]), frameMicros: Int(p[3]) * 100))
        default: return nil
        }
    }
}
