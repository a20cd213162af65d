// SPDX-License-Identifier: GPL-2.0-or-later
import AssistantEngine
import DesktopCalendar
import Firmware
import Foundation
import GlassdConfig
import GlassdDaemon
import MCUmgr
import Monocle
import NotifyRules
import Scene

/// A parser of outside input, fed arbitrary bytes: it must return or throw its typed error,
/// never trap, hang or grow without bound.
enum FuzzTarget: String, CaseIterable {
    /// A data-channel frame from the glasses.
    case dataChannel = "data-channel"
    /// What the raw REPL prints: banners, results and a device check's reply.
    case replReply = "repl-reply"
    /// A chat server's event stream, each event decoded as a chunk.
    case sse
    /// A DFU package (ZIP with a manifest, an init packet and an image).
    case dfuPackage = "dfu-package"
    /// A camera frame (and a photo) from the glasses.
    case jpeg
    /// glassd.conf.
    case config
    /// notify.toml, glassctl notify-agent's rules.
    case notifyRules = "notify-rules"
    /// The iCalendar objects of the desktop's calendar (EDS), read for the next event.
    case icalendar
    /// DBusKit's message encoding and decoding, in calls through a private dbus-daemon.
    case dbusMessage = "dbus-message"
    /// A CBOR item (an SMP answer's payload).
    case cbor
    /// An SMP frame from the glasses, and what the commands read from its payload.
    case smpFrame = "smp-frame"
    /// An MCUboot image file (`zephyr.signed.bin`) given to an update.
    case mcubootImage = "mcuboot-image"

    func run(_ bytes: [UInt8]) {
        switch self {
        case .dataChannel:
            _ = try? DataMessage.decode(bytes)
        case .replReply:
            var buffer = ReplBuffer(limit: 4096)
            // Fed in pieces, as notifications arrive.
            for piece in stride(from: 0, to: bytes.count, by: 20) {
                buffer.append(Array(bytes[piece..<min(piece + 20, bytes.count)]))
                _ = buffer.takeBanner()
                if let result = buffer.takeResult() { _ = try? DeviceCommands.parseCheck(result.stdout) }
            }
            _ = try? DeviceCommands.parseCheck(String(decoding: bytes, as: UTF8.self))
        case .sse:
            var parser = SSEParser(maxLine: 1 << 16)
            var usage: TokenUsage?
            let events = (try? parser.feed(bytes)).map { $0 + [try? parser.finish()].compactMap { $0 ?? nil } } ?? []
            for event in events {
                _ = try? ChatStreamDecoder.decode(event, usage: &usage)
            }
            _ = try? ChatStreamDecoder.decode(completion: bytes, usage: &usage)
            _ = ChatStreamDecoder.errorMessage(body: bytes)
        case .dfuPackage:
            _ = try? DFUPackage(bytes: bytes)
            _ = try? DFUResponse.decode(bytes)
        case .jpeg:
            guard let decoder = try? JPEGDecoder() else { return }
            _ = try? decoder.decode(bytes)
        case .config:
            _ = try? Config.parse(String(decoding: bytes, as: UTF8.self))
        case .notifyRules:
            _ = try? NotifyRules.parse(String(decoding: bytes, as: UTF8.self))
        case .icalendar:
            // A fixed now and zone: the same input takes the same path every run.
            _ = NextEvent.next(
                in: [String(decoding: bytes, as: UTF8.self)], now: Date(timeIntervalSince1970: 1_795_860_000),
                local: TimeZone(identifier: "Europe/Berlin") ?? .current)
        case .dbusMessage:
            DBusRoundTrip.run(bytes)
        case .cbor:
            guard let value = try? CBOR.decode(bytes) else { return }
            // What decodes must encode, and decode again to the same bytes (NaN payloads included).
            let encoded = value.encoded
            guard let again = try? CBOR.decode(encoded), again.encoded == encoded else {
                fatalError("CBOR round trip failed for \(bytes)")
            }
        case .smpFrame:
            guard let frame = try? SMPFrame.decode(bytes) else { return }
            _ = frame.error?.description
            _ = try? ImageState.decode(frame.payload)
            _ = try? ImageUploadAnswer.decode(frame.payload)
            _ = try? MCUmgrParameters.decode(frame.payload)
            _ = try? frame.encoded()
        case .mcubootImage:
            _ = try? MCUbootImage(bytes: bytes)
        }
    }
}
