// SPDX-License-Identifier: GPL-2.0-or-later
@testable import Bluetooth
import Foundation
import GlassdCore
import Glibc
import Testing

/// The socket loop over real SOCK_SEQPACKET socket pairs, standing in for BlueZ's acquired sockets.
@Suite("Socket loop")
struct SocketLoopTests {
    /// A seqpacket pair: (ours, the peer's).
    private func pair() throws -> (Int32, Int32) {
        var fds: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue), 0, &fds) == 0 else { throw POSIXError(.EIO) }
        return (fds[0], fds[1])
    }

    private func readPacket(_ fd: Int32) -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let n = read(fd, &buffer, buffer.count)
        return n > 0 ? Array(buffer[..<n]) : []
    }

    @Test("notifications arrive as packets; EOF ends the inbox and reports the link lost")
    func eofIsADrop() async throws {
        let (ours, peer) = try pair()
        let inbox = PacketInbox()
        let loop = SocketLoop(channels: [.init(notifyFD: ours, writeFD: nil, inbox: inbox)], name: "test-sockets")
        _ = [UInt8]([1, 2, 3]).withUnsafeBytes { write(peer, $0.baseAddress, $0.count) }
        #expect(await inbox.next() == .packet([1, 2, 3]))
        close(peer)
        #expect(await inbox.next() == nil)
        await loop.lost.wait()
        loop.close()
    }

    @Test("each channel queues its own writes; a stalled one holds up no other; cancelling a stalled write ends it")
    func separateQueues() async throws {
        let (serialOurs, serialPeer) = try pair()
        let (dataOurs, dataPeer) = try pair()
        // A small send buffer, so the serial channel stalls while its peer does not read.
        var size: Int32 = 4096
        setsockopt(serialOurs, SOL_SOCKET, SO_SNDBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        let loop = SocketLoop(
            channels: [.init(notifyFD: nil, writeFD: serialOurs, inbox: nil), .init(notifyFD: nil, writeFD: dataOurs, inbox: nil)],
            name: "test-sockets")
        let packets = Array(repeating: [UInt8](repeating: 0x55, count: 253), count: 2000)
        let upload = Task { try await loop.write(channel: 0, packets: packets) }
        // The data channel's message goes out although the upload is stuck.
        try await loop.write(channel: 1, packets: [Array("res:hi".utf8)])
        #expect(readPacket(dataPeer) == Array("res:hi".utf8))
        upload.cancel()
        await #expect(throws: CancellationError.self) { try await upload.value }
        // After the cancelled upload the serial channel still works: drain what was sent, then a new write arrives whole.
        var flags = fcntl(serialPeer, F_GETFL)
        flags |= O_NONBLOCK
        _ = fcntl(serialPeer, F_SETFL, flags)
        while readPacket(serialPeer).count == 253 {}
        try await loop.write(channel: 0, packets: [[0x03]])
        _ = fcntl(serialPeer, F_SETFL, flags & ~O_NONBLOCK)
        #expect(readPacket(serialPeer) == [0x03])
        loop.close()
        await #expect(throws: ChannelError.closed) { try await loop.write(channel: 1, packets: [[1]]) }
        close(serialPeer)
        close(dataPeer)
    }
}
