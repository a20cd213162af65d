// SPDX-License-Identifier: GPL-2.0-or-later
import DBusKit
import GlassdCore

/// One Monocle service over BlueZ: writes go to RX with WriteValue(type command) in pieces of
/// MTU − 3 bytes; notifications on TX arrive as PropertiesChanged(Value).
final class BlueZChannel: ByteChannel {
    let client: BlueZClient
    let rx: String
    let tx: String
    let chunkSize: Int
    let incoming: AsyncStream<[UInt8]>

    init(client: BlueZClient, rx: String, tx: String, mtu: Int) {
        self.client = client
        self.rx = rx
        self.tx = tx
        self.chunkSize = max(20, mtu - 3)
        self.incoming = client.state.values(of: tx)
    }

    func write(_ bytes: [UInt8]) async throws {
        var offset = 0
        repeat {
            let end = min(offset + chunkSize, bytes.count)
            try await client.call(
                rx, BlueZ.characteristic, "WriteValue",
                [.bytes(Array(bytes[offset..<end])), .vardict(["type": .string("command")])])
            offset = end
        } while offset < bytes.count
    }

    func close() {
        client.state.stopValues(tx)
    }
}

/// A connected Monocle: its serial (REPL) and data channels.
public final class BlueZLink: GlassesLink {
    let serialChannel: BlueZChannel
    let dataChannel: BlueZChannel
    public var serial: any ByteChannel { serialChannel }
    public var data: any ByteChannel { dataChannel }

    init(serial: BlueZChannel, data: BlueZChannel) {
        serialChannel = serial
        dataChannel = data
    }

    /// Ends both incoming streams (the link dropped or was released).
    func close() {
        serialChannel.close()
        dataChannel.close()
    }
}
