// SPDX-License-Identifier: GPL-2.0-or-later
import LinkKit
import Monocle
import Synchronization

/// A packet channel that records what is written and lets the test push notifications.
final class FakeDataChannel: ByteChannel {
    let maxPacketSize = 253
    let framing = ChannelFraming.packets
    let incoming = PacketInbox()
    let writes = Mutex<[[UInt8]]>([])
    let onWrite: @Sendable ([UInt8]) -> Void

    init(onWrite: @escaping @Sendable ([UInt8]) -> Void = { _ in }) {
        self.onWrite = onWrite
    }

    func write(_ bytes: [UInt8]) async throws {
        guard bytes.count <= maxPacketSize else { throw ChannelError.tooLong(size: bytes.count, limit: maxPacketSize) }
        writes.withLock { $0.append(bytes) }
        onWrite(bytes)
    }

    var written: [DataMessage] { writes.withLock { $0 }.compactMap { try? DataMessage.decode($0) } }
}

/// A Monocle whose REPL understands the session's commands without running them: the check
/// reports what a fake flash holds, the upload's final rename stores the scripts, and starting
/// the scripts (soft reboot or run()) makes them say rdy: on the data channel.
final class FakeMonocle: Sendable {
    struct Contents: Sendable {
        var stored: String?
        var running: String?
    }

    final class Flash: Sendable {
        let contents: Mutex<Contents>
        init(_ contents: Contents) { self.contents = Mutex(contents) }
        func withLock<T>(_ body: (inout Contents) -> T) -> T { contents.withLock { body(&$0) } }
    }

    let flash: Flash
    let data: FakeDataChannel
    let serial: FakeREPLDevice

    init(scripts: DeviceScripts, stored: String? = nil, running: String? = nil, battery: UInt8 = 77) {
        let flash = Flash(Contents(stored: stored, running: running))
        let data = FakeDataChannel()
        self.flash = flash
        self.data = data
        serial = FakeREPLDevice(
            greeting: "MicroPython v1.20.0; Monocle\r\n>>> ",
            execute: { code in
            if code.hasPrefix("print('glassd-sync") { return (String(code.dropFirst(7).dropLast(2)) + "\r\n", "") }
            if code == DeviceCommands.check(scripts) {
                let f = flash.withLock { $0 }
                return ("v23.248.0754\r\nv23.230.0808\r\n\(battery)\r\n\(f.running ?? "-")\r\n\(f.stored ?? "-")\r\n", "")
            }
            if code.contains("os.rename('main.py.tmp','main.py')") { flash.withLock { $0.stored = scripts.version } }
            if code == DeviceCommands.resume { data.incoming.push(DataMessage.ready.encoded) }
            return ("", "")
            },
            onReboot: {
                flash.withLock { $0.running = $0.stored }
                data.incoming.push(DataMessage.ready.encoded)
            })
    }

    var link: any GlassesLink { FakeLink(serial: serial, data: data) }
}

struct FakeLink: GlassesLink {
    let serial: FakeREPLDevice
    let data: FakeDataChannel
    var profile: GATTProfile { .monocle }
    func channel(_ name: String) -> (any ByteChannel)? {
        name == MonocleChannel.serial ? serial : name == MonocleChannel.data ? data : nil
    }
}
