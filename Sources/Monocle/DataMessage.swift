// SPDX-License-Identifier: GPL-2.0-or-later
import Glasses

/// One message on the Monocle's data channel: a 4-byte ASCII command, then the payload; one BLE
/// write or notification each. The Noa protocol's commands (monocle-protocol.md §7), and the
/// few glassd's own device scripts add (marked "glassd").
public enum DataMessage: Sendable, Equatable {
    /// rdy: the scripts wait for a tap (sent after every start).
    case ready
    /// ast: a voice query starts, recorded in this format: glassd's scripts name it (`16,8`),
    /// Noa's send nothing, which is 8 kHz 8-bit (AudioFormat.monocle).
    case audioStart(AudioFormat)
    /// dat: the recording's samples, mono, as ast: (or ist:) said.
    case audioData([UInt8])
    /// aen: the recording ended.
    case audioEnd
    /// ist: a photo starts (touch held); the question after it is recorded in this format (as ast:).
    case imageStart(AudioFormat)
    /// idt: JPEG bytes.
    case imageData([UInt8])
    /// ien: the photo ended; the spoken question follows (dat:, aen:).
    case imageEnd
    /// pin: host → device; the device answers pon: with the same payload.
    case ping(String)
    case pong(String)
    /// res: answer text to append.
    case response(String)
    /// err: error text, shown in red.
    case error(String)
    /// ick: the photo was taken in; no text follows.
    case imageAck
    /// dsp: (glassd) clear the answer area and show the text; res: appends to it.
    case display(String)
    /// stp: (glassd) stop recording now (the host heard the end of speech).
    case stopRecording
    /// can: (glassd) the user cancelled the pending answer with a tap.
    case cancelled
    /// end: (glassd) the answer is complete: the glasses are ready for the next question.
    case answerEnd
    /// bat: (glassd) the battery level in percent, when it changed.
    case battery(UInt8)
    /// ack: (glassd) how many host messages the device has taken in so far (modulo 1,000,000).
    case ack(UInt32)
    /// cap: (glassd) host → device, scene mode: take a photo now and stream it (sst:, idt:, sen:).
    case capture
    /// sst: (glassd) a scene frame starts; idt: chunks follow.
    case sceneStart
    /// sen: (glassd) the scene frame is complete (no question follows).
    case sceneEnd
    /// alr: (glassd) host → device: show a hazard warning in the warning colour; empty clears it.
    case alert(String)
    /// pga: (glassd) host → device: text of a laid-out answer's pages, appended; a form feed
    /// separates pages.
    case pageText(String)
    /// pgs: (glassd) host → device: show the pages sent (the first now; a tap turns the page).
    case pagesShow
    /// lsn: (glassd) host → device: "1" streams what idle glasses hear (lis:), "0" stops.
    case listen(Bool)
    /// lis: (glassd) signed 8-bit, 8 kHz samples heard while listening for the wake phrase.
    case listening([UInt8])
    /// wak: (glassd) host → device: the wake phrase was heard; start a question as a tap would,
    /// showing the text.
    case wake(String)
    /// gla: (glassd) the wearer pressed both pads on idle glasses: show the glance. No payload.
    case glance

    public static let prefixLength = 4
    /// The `ack:` counter wraps here.
    public static let ackModulus: UInt32 = 1_000_000

    public var command: String {
        switch self {
        case .ready: "rdy:"
        case .audioStart: "ast:"
        case .audioData: "dat:"
        case .audioEnd: "aen:"
        case .imageStart: "ist:"
        case .imageData: "idt:"
        case .imageEnd: "ien:"
        case .ping: "pin:"
        case .pong: "pon:"
        case .response: "res:"
        case .error: "err:"
        case .imageAck: "ick:"
        case .display: "dsp:"
        case .stopRecording: "stp:"
        case .cancelled: "can:"
        case .answerEnd: "end:"
        case .battery: "bat:"
        case .ack: "ack:"
        case .capture: "cap:"
        case .sceneStart: "sst:"
        case .sceneEnd: "sen:"
        case .alert: "alr:"
        case .pageText: "pga:"
        case .pagesShow: "pgs:"
        case .listen: "lsn:"
        case .listening: "lis:"
        case .wake: "wak:"
        case .glance: "gla:"
        }
    }

    /// The bytes of one write.
    public var encoded: [UInt8] {
        let payload: [UInt8] =
            switch self {
            case .audioData(let bytes), .imageData(let bytes), .listening(let bytes): bytes
            case .listen(let on): Array((on ? "1" : "0").utf8)
            case .ping(let s), .pong(let s), .response(let s), .error(let s), .display(let s), .alert(let s),
                .pageText(let s), .wake(let s):
                Array(s.utf8)
            case .battery(let level): Array(String(level).utf8)
            case .ack(let count): Array(String(count).utf8)
            case .audioStart(let format), .imageStart(let format): Array(format.monocleText.utf8)
            case .ready, .audioEnd, .imageEnd, .imageAck, .stopRecording, .cancelled, .answerEnd,
                .capture, .sceneStart, .sceneEnd, .pagesShow, .glance:
                []
            }
        return Array(command.utf8) + payload
    }

    /// Why a frame could not be decoded.
    public enum DecodeError: Error, Sendable, Equatable {
        case tooShort(Int)
        case unknownCommand([UInt8])
        case badPayload(command: String)

        /// What went wrong, without the frame's bytes: one of a few kinds, for rate-limited logs.
        public var kind: String {
            switch self {
            case .tooShort: "a frame too short"
            case .unknownCommand: "an unknown command"
            case .badPayload(let command): "a bad \(command) payload"
            }
        }
    }

    /// Decodes one frame (any direction).
    public static func decode(_ frame: [UInt8]) throws(DecodeError) -> DataMessage {
        guard frame.count >= prefixLength else { throw .tooShort(frame.count) }
        let prefix = frame[..<prefixLength]
        let payload = Array(frame[prefixLength...])
        guard prefix.allSatisfy({ $0 >= 0x61 && $0 <= 0x7A || $0 == 0x3A }),
            let command = String(validating: prefix, as: UTF8.self)
        else { throw .unknownCommand(Array(prefix)) }
        func text() throws(DecodeError) -> String {
            guard let s = String(validating: payload, as: UTF8.self) else { throw .badPayload(command: command) }
            return s
        }
        func number(max: UInt32) throws(DecodeError) -> UInt32 {
            guard !payload.isEmpty, payload.count <= 10, payload.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
                let n = UInt32(try text()), n <= max
            else { throw .badPayload(command: command) }
            return n
        }
        switch command {
        case "rdy:": return .ready
        case "ast:", "ist:":
            guard let text = String(validating: payload, as: UTF8.self), let format = AudioFormat(monocleText: text) else {
                throw .badPayload(command: command)
            }
            return command == "ast:" ? .audioStart(format) : .imageStart(format)
        case "dat:": return .audioData(payload)
        case "aen:": return .audioEnd
        case "idt:": return .imageData(payload)
        case "ien:": return .imageEnd
        case "pin:": return .ping(try text())
        case "pon:": return .pong(try text())
        case "res:": return .response(try text())
        case "err:": return .error(try text())
        case "ick:": return .imageAck
        case "dsp:": return .display(try text())
        case "stp:": return .stopRecording
        case "can:": return .cancelled
        case "end:": return .answerEnd
        case "bat:": return .battery(UInt8(try number(max: 100)))
        case "ack:": return .ack(try number(max: ackModulus - 1))
        case "cap:": return .capture
        case "sst:": return .sceneStart
        case "sen:": return .sceneEnd
        case "alr:": return .alert(try text())
        case "pga:": return .pageText(try text())
        case "pgs:": return .pagesShow
        case "lsn:":
            guard payload == [0x30] || payload == [0x31] else { throw .badPayload(command: command) }
            return .listen(payload == [0x31])
        case "lis:": return .listening(payload)
        case "wak:": return .wake(try text())
        case "gla:":
            guard payload.isEmpty else { throw .badPayload(command: command) }
            return .glance
        default: throw .unknownCommand(Array(prefix))
        }
    }
}
