// SPDX-License-Identifier: GPL-2.0-or-later
@testable import Bluetooth
import Concurrency
import Foundation
import Glibc
import LinkKit
import Testing
import TestSupport

/// The socket loop over real SOCK_SEQPACKET socket pairs, standing in for BlueZ's acquired sockets.
@Suite("Socket loop", .timeLimit(.minutes(5)))
struct SocketLoopTests {
    /// A seqpacket pair: (ours, the peer's). Close-on-exec: a process another suite starts
    /// meanwhile must not inherit our end, or the peer would see no EOF when the loop closes it.
    private func pair() throws -> (Int32, Int32) {
        var fds: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds) == 0 else { throw POSIXError(.EIO) }
        return (fds[0], fds[1])
    }

    /// The next packet on `fd`; [] at EOF, or when none comes within 60 s (recorded as a failure:
    /// a guard against a hang, not a timing assertion). Waited for off the pool: the packet may
    /// come from a task that needs a pool thread.
    private func readPacket(_ fd: Int32) async -> [UInt8] {
        guard await readable(fd, within: 60_000) else {
            Issue.record("no packet on \(fd) within 60 s")
            return []
        }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let n = read(fd, &buffer, buffer.count)
        return n > 0 ? Array(buffer[..<n]) : []
    }

    /// Whether `fd` has a packet (or EOF) to read now.
    private func readableNow(_ fd: Int32) -> Bool {
        var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return poll(&entry, 1, 0) > 0
    }

    private func isCancellation(_ outcome: Result<Void, any Error>?) -> Bool {
        guard case .failure(let error)? = outcome else { return false }
        return error is CancellationError
    }

    /// Reads every packet already queued on `fd`: how many there were.
    private func drain(_ fd: Int32) -> Int {
        var count = 0
        var buffer = [UInt8](repeating: 0, count: 4096)
        while readableNow(fd), read(fd, &buffer, buffer.count) > 0 { count += 1 }
        return count
    }

    @Test("notifications arrive as packets; EOF ends the inbox and reports the link lost")
    func eofIsADrop() async throws {
        let (ours, peer) = try pair()
        let inbox = PacketInbox()
        let loop = try SocketLoop(channels: [.init(notifyFD: ours, writeFD: nil, inbox: inbox)], name: "test-sockets")
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
        let loop = try SocketLoop(
            channels: [.init(notifyFD: nil, writeFD: serialOurs, inbox: nil), .init(notifyFD: nil, writeFD: dataOurs, inbox: nil)],
            name: "test-sockets")
        let packets = Array(repeating: [UInt8](repeating: 0x55, count: 253), count: 2000)
        let upload = Task { try await loop.write(channel: 0, packets: packets) }
        #expect(await readable(serialPeer, within: 60_000), "the upload began")
        // The data channel's message goes out although the upload is stuck.
        try await loop.write(channel: 1, packets: [Array("res:hi".utf8)])
        #expect(await readPacket(dataPeer) == Array("res:hi".utf8))
        upload.cancel()
        let ended = await result(of: upload, within: .seconds(60))
        #expect(isCancellation(ended), "the cancelled upload ended with \(String(describing: ended))")
        // After the cancelled upload the serial channel still works: drain what was sent, then a new write arrives whole.
        #expect(drain(serialPeer) < packets.count)
        try await loop.write(channel: 0, packets: [[0x03]])
        #expect(await readPacket(serialPeer) == [0x03])
        loop.close()
        await #expect(throws: ChannelError.closed) { try await loop.write(channel: 1, packets: [[1]]) }
        close(serialPeer)
        close(dataPeer)
    }

    @Test("a write from a task cancelled before it writes is refused: CancellationError, nothing sent", arguments: [false, true])
    func cancelledBeforeWrite(stalled: Bool) async throws {
        let (ours, peer) = try pair()
        let loop = try SocketLoop(channels: [.init(notifyFD: nil, writeFD: ours, inbox: nil)], name: "test-sockets")
        if stalled {
            // The peer's buffer full: a write that got in uncancelled would never end.
            var filler = [UInt8](repeating: 0xAA, count: 200)
            _ = fcntl(ours, F_SETFL, fcntl(ours, F_GETFL) | O_NONBLOCK)
            while send(ours, &filler, filler.count, Int32(MSG_NOSIGNAL)) > 0 {}
        }
        // Many rounds: the loop may take the cancellation before, with or after the write.
        for round in 0..<200 {
            let write = Task {
                withUnsafeCurrentTask { $0?.cancel() }
                try await loop.write(channel: 0, packets: [[UInt8(truncatingIfNeeded: round)]])
            }
            let outcome = await result(of: write, within: .seconds(60))
            guard isCancellation(outcome) else {
                Issue.record("round \(round): the cancelled write ended with \(String(describing: outcome))")
                break
            }
        }
        if !stalled { #expect(!readableNow(peer), "a cancelled write sent its packet") }
        loop.close()
        close(peer)
    }

    @Test("a loop released without close() ends its thread and releases its sockets")
    func releasedLoopEnds() async throws {
        let (ours, peer) = try pair()
        weak var released: SocketLoop?
        let exited: OneShotEvent
        do {
            let loop = try SocketLoop(channels: [.init(notifyFD: nil, writeFD: ours, inbox: nil)], name: "test-sockets")
            try await loop.write(channel: 0, packets: [[7]])
            released = loop
            exited = loop.exited
        }
        #expect(released == nil, "something still holds the loop")
        try await within(.seconds(60), failure: { "the loop's thread did not end" }) { await exited.wait() }
        #expect(await readPacket(peer) == [7])
        // Waited for, not looked at once: a process another suite is starting may hold a copy of
        // our end for a moment (between its fork and its exec, where close-on-exec acts).
        let closed = await readable(peer, within: 60_000)
        #expect(closed, "our end is closed: the peer reads EOF")
        if closed { #expect(await readPacket(peer) == [], "our end is closed: the peer reads EOF") }
        close(peer)
    }
}
