// SPDX-License-Identifier: GPL-2.0-or-later
import DBusKit
import GlassdCore
import Glibc
import Logging

/// One Monocle service over BlueZ. Writes go in pieces of MTU − 3 bytes, through the
/// AcquireWrite socket where BlueZ offers one, else as WriteValue(type command); notifications come
/// from the AcquireNotify socket, else as PropertiesChanged(Value) after StartNotify.
final class BlueZChannel: ByteChannel {
    enum Writer: Sendable {
        case writeValue(BlueZClient, path: String)
        case socket(SocketLoop, channel: Int)
    }

    let writer: Writer
    let chunkSize: Int
    let incoming: AsyncStream<[UInt8]>
    /// One write at a time, so two writers' pieces never interleave.
    private let gate = AsyncGate()

    init(writer: Writer, mtu: Int, incoming: AsyncStream<[UInt8]>) {
        self.writer = writer
        self.chunkSize = max(20, mtu - 3)
        self.incoming = incoming
    }

    func write(_ bytes: [UInt8]) async throws {
        guard !bytes.isEmpty else { return }
        var pieces: [[UInt8]] = []
        var offset = 0
        repeat {
            let end = min(offset + chunkSize, bytes.count)
            pieces.append(Array(bytes[offset..<end]))
            offset = end
        } while offset < bytes.count
        switch writer {
        case .socket(let loop, let channel):
            try await loop.write(channel: channel, packets: pieces)
        case .writeValue(let client, let path):
            try await gate.withLock(isolation: nil) {
                for piece in pieces {
                    try await client.call(
                        path, BlueZ.characteristic, "WriteValue", [.bytes(piece), .vardict(["type": .string("command")])])
                }
            }
        }
    }
}

/// A connected Monocle: its serial (REPL) and data channels, and what to release when it goes.
public final class BlueZLink: GlassesLink {
    let serialChannel: BlueZChannel
    let dataChannel: BlueZChannel
    private let sockets: SocketLoop?
    private let notifyPaths: [String]
    private let state: BlueZState
    public var serial: any ByteChannel { serialChannel }
    public var data: any ByteChannel { dataChannel }

    init(serial: BlueZChannel, data: BlueZChannel, sockets: SocketLoop?, notifyPaths: [String], state: BlueZState) {
        serialChannel = serial
        dataChannel = data
        self.sockets = sockets
        self.notifyPaths = notifyPaths
        self.state = state
    }

    /// Ends both incoming streams and releases acquired sockets (the link dropped or was released).
    func close() {
        sockets?.close()
        for path in notifyPaths { state.stopValues(path) }
    }
}

