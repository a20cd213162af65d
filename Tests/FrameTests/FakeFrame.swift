// SPDX-License-Identifier: GPL-2.0-or-later
import Frame
import LinkKit
import Synchronization

/// An in-memory Brilliant Frame on one RX/TX pair, behaving as its firmware does: every write is
/// a Lua chunk (run at once when the REPL waits, else kept in its one pending slot, a newer chunk
/// replacing it), 0x03 breaks the running script (which prints its error on the way out), 0x04
/// resets into main.lua, a write starting with 0x01 is app data. Each `print` is one
/// notification. Chunks are answered by `handler` first, then by the patterns the upload and
/// handshake use (files are kept in `state.files`); anything else prints a Lua error. The test
/// can make it lose breaks or replies, stay silent, let a break hit the probe, or print stale
/// lines when its script stops.
final class FakeFrame: ByteChannel {
    /// One notification: print text, or app data.
    enum Note: Sendable {
        case text(String)
        case data(AppMessage)
    }

    enum Reply: Sendable {
        case prints([String])
        /// Prints and app data, in order.
        case notes([Note])
        case error(String)
        case silent
    }

    struct State {
        /// A script runs (the app): chunks wait in `pending`.
        var running = false
        var pending: String?
        var writes: [[UInt8]] = []
        /// Chunks the REPL ran, in order.
        var ran: [String] = []
        var files: [String: [UInt8]] = [:]
        var open: String?
        var appData: [[UInt8]] = []
        var resets = 0
        /// Breaks swallowed before one takes effect.
        var loseBreaks = 0
        /// Probes answered with the break's error (the break reached the REPL after the probe).
        var breakHitsProbe = 0
        /// Replies lost whole (the firmware drops a print when its buffer is full).
        var dropReplies = 0
        /// Nothing printed at all.
        var silent = false
        /// Printed when the running script is broken, before its error.
        var staleOnBreak: [String] = []
        /// What each notification ends with ("" as the firmware; "\r\n" as others might).
        var lineEnding = ""
        /// The app's version global while it runs, nil when no app was loaded.
        var appVersion: String?
    }

    let maxPacketSize: Int
    let framing = ChannelFraming.packets
    let incoming = PacketInbox()
    let state: Mutex<State>
    let handler: @Sendable (String, inout State) -> Reply?

    init(maxPacketSize: Int = 244, running: Bool = false, handler: @escaping @Sendable (String, inout State) -> Reply? = { _, _ in nil }) {
        self.maxPacketSize = maxPacketSize
        self.handler = handler
        state = Mutex(State(running: running))
    }

    var writes: [[UInt8]] { state.withLock { $0.writes } }
    var ran: [String] { state.withLock { $0.ran } }
    var breaks: Int { writes.filter { $0 == [0x03] }.count }
    var probes: [String] { writes.map { String(decoding: $0, as: UTF8.self) }.filter { $0.hasPrefix("print('glassd:") } }

    func write(_ bytes: [UInt8]) async throws {
        guard bytes.count <= maxPacketSize else { throw ChannelError.tooLong(size: bytes.count, limit: maxPacketSize) }
        let out = state.withLock { s -> [[UInt8]] in
            s.writes.append(bytes)
            var out: [Note] = []
            switch bytes.first {
            case 0x03:
                if s.loseBreaks > 0 {
                    s.loseBreaks -= 1
                    return []
                }
                if s.running {
                    s.running = false
                    out += s.staleOnBreak.map(Note.text)
                    out.append(.text("glassd_app.lua:97: break signal"))
                    if let chunk = s.pending {
                        s.pending = nil
                        out += run(chunk, &s)
                    }
                }
            case 0x04:
                guard !s.running else { return [] }
                s.resets += 1
                s.appVersion = nil
                if s.files["main.lua"] != nil { out += Self.start(&s) }
            case 0x01:
                s.appData.append(bytes)
            default:
                let chunk = String(decoding: bytes, as: UTF8.self)
                if s.running {
                    s.pending = chunk
                } else {
                    out += run(chunk, &s)
                }
            }
            if s.silent { return [] }
            return out.map { note in
                switch note {
                case .text(let text): Array((text + s.lineEnding).utf8)
                case .data(let message): message.encoded
                }
            }
        }
        for packet in out { incoming.push(packet) }
    }

    /// The device sends app data (the 0x01 prefix added here, as the firmware does).
    func send(_ message: AppMessage) { incoming.push(message.encoded) }

    /// Prints as a running script would.
    func print(_ text: String) { incoming.push(Array(text.utf8)) }

    private func run(_ chunk: String, _ s: inout State) -> [Note] {
        s.ran.append(chunk)
        let reply = handler(chunk, &s) ?? builtIn(chunk, &s)
        switch reply {
        case .prints(let lines):
            if s.dropReplies > 0 {
                s.dropReplies -= 1
                return []
            }
            return lines.map(Note.text)
        case .notes(let notes): return notes
        case .error(let message): return [.text(message)]
        case .silent: return []
        }
    }

    /// The app starts (main.lua after a reset, or a chunk that runs it): it sends ready, as
    /// data, so it is not subject to dropped prints. Its version is what the stored app file
    /// stamps, unless the test set one.
    static func start(_ s: inout State) -> [Note] {
        s.running = true
        let version = s.appVersion ?? s.files["glassd_app.lua"].flatMap(versionGlobal) ?? "-"
        s.appVersion = version
        return [.data(.ready(version))]
    }

    private func builtIn(_ chunk: String, _ s: inout State) -> Reply {
        if chunk.hasPrefix("print('glassd:"), chunk.hasSuffix("')") {
            if s.breakHitsProbe > 0 {
                s.breakHitsProbe -= 1
                return .error("[string \"\(chunk)\"]:1: break signal")
            }
            return .prints([String(chunk.dropFirst(7).dropLast(2))])
        }
        if let name = between(chunk, "_gf=frame.file.open('", "','w');print(1)") {
            s.open = name
            s.files[name] = []
            return .prints(["1"])
        }
        if let escaped = between(chunk, "_gf:write(\"", "\");print(1)") {
            guard let name = s.open, let bytes = LuaUnescape.bytes(escaped) else {
                return .error("[string \"_gf:write(...\"]:1: attempt to index a nil value (global '_gf')")
            }
            s.files[name, default: []] += bytes
            return .prints(["1"])
        }
        if chunk == "_gf:close();_gf=nil;print(1)", s.open != nil {
            s.open = nil
            return .prints(["1"])
        }
        if let name = between(chunk, "pcall(frame.file.remove,'", "');print(1)") {
            s.files[name] = nil
            return .prints(["1"])
        }
        return .error("[string \"\(chunk.prefix(40))\"]:1: attempt to call a nil value (global 'nope')")
    }

    /// What the app file's first line sets its version global to, as Lua would read it.
    static func versionGlobal(_ contents: [UInt8]) -> String? {
        let line = String(decoding: contents.prefix { $0 != 0x0A }, as: UTF8.self)
        let prefix = "GLASSD_APP_VERSION = '"
        guard line.hasPrefix(prefix), line.hasSuffix("'") else { return nil }
        return String(line.dropFirst(prefix.count).dropLast())
    }

    private func between(_ s: String, _ prefix: String, _ suffix: String) -> String? {
        guard s.hasPrefix(prefix), s.hasSuffix(suffix), s.count >= prefix.count + suffix.count else { return nil }
        return String(s.dropFirst(prefix.count).dropLast(suffix.count))
    }
}
