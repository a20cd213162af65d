// SPDX-License-Identifier: GPL-2.0-or-later
import LinkKit
import Monocle
import Synchronization

/// A scripted stand-in for the Monocle's REPL, behaving as MicroPython's pyexec does on the
/// device: friendly REPL until Ctrl-A, then raw REPL; Ctrl-C clears the line, Ctrl-D runs it
/// (`OK`, stdout, `\x04`, traceback, `\x04`, `>`) or, on an empty line, soft-reboots. Commands are
/// "run" by `execute`. Replies are cut into notifications of `split` bytes. Everything written
/// is kept in `written`.
final class FakeREPLDevice: ByteChannel {
    struct State {
        var raw = false
        var line: [UInt8] = []
        var written: [UInt8] = []
        var commands: [String] = []
        var reboots = 0
        /// Output not yet sent, and the next reply to lose a byte from (lost bytes).
        var dropNextReplyByte: Int?
        var swallowCtrlA = 0
    }

    let maxPacketSize = 253
    let framing = ChannelFraming.stream
    let incoming = PacketInbox()
    let state: Mutex<State>
    let split: Int
    let execute: @Sendable (String) -> (stdout: String, stderr: String)
    let onReboot: @Sendable () -> Void

    init(
        split: Int = 253, startRaw: Bool = false, greeting: String = "",
        execute: @escaping @Sendable (String) -> (stdout: String, stderr: String) = { _ in ("", "") },
        onReboot: @escaping @Sendable () -> Void = {}
    ) {
        self.split = split
        self.execute = execute
        self.onReboot = onReboot
        state = Mutex(State(raw: startRaw))
        if !greeting.isEmpty { emit(Array(greeting.utf8)) }
    }

    var written: [UInt8] { state.withLock { $0.written } }
    var commands: [String] { state.withLock { $0.commands } }

    func write(_ bytes: [UInt8]) async throws {
        var out: [UInt8] = []
        var rebooted = false
        state.withLock { s in
            s.written += bytes
            for byte in bytes {
                switch byte {
                case 0x01:
                    if s.swallowCtrlA > 0 {
                        s.swallowCtrlA -= 1
                        continue
                    }
                    if !s.raw { out += Array("\r\n".utf8) }
                    s.raw = true
                    s.line = []
                    out += Array("raw REPL; CTRL-B to exit\r\n>".utf8)
                case 0x02:
                    s.raw = false
                    out += Array("\r\nMicroPython v1.20.0; Monocle\r\n>>> ".utf8)
                case 0x03:
                    s.line = []
                    if !s.raw { out += Array("\r\n>>> ".utf8) }
                case 0x04 where s.raw:
                    out += Array("OK".utf8)
                    if s.line.isEmpty {
                        s.reboots += 1
                        rebooted = true
                        out += Array("\r\nMPY: soft reboot\r\n".utf8)
                    } else {
                        let code = String(decoding: s.line, as: UTF8.self)
                        s.commands.append(code)
                        let (stdout, stderr) = execute(code)
                        out += Array(stdout.utf8) + [0x04] + Array(stderr.utf8) + [0x04] + Array(">".utf8)
                    }
                    s.line = []
                default:
                    s.line.append(byte)
                }
            }
            if let drop = s.dropNextReplyByte, drop < out.count {
                out.remove(at: drop)
                s.dropNextReplyByte = nil
            }
        }
        emit(out)
        if rebooted { onReboot() }
    }

    func emit(_ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let end = min(offset + split, bytes.count)
            incoming.push(Array(bytes[offset..<end]))
            offset = end
        }
    }
}
