// SPDX-License-Identifier: GPL-2.0-or-later
import Concurrency
import LinkKit

/// Writes to the device's data channel, paced so that no more than `window` messages wait on the
/// device: MicroPython's scheduler queue holds 4 callbacks and drops what comes beyond. The
/// scripts report how many they took (`ack:`, cumulative); a write waits for room. If the device
/// stays silent for `silence`, it is taken to have caught up (older scripts, a lost ack).
public actor DataLink<C: Clock> where C.Duration == Duration {
    let channel: any ByteChannel
    let clock: C
    public let window: UInt32
    public let silence: Duration
    private var sent: UInt32 = 0
    private var acked: UInt32 = 0
    private let acks = Pulse()

    public init(channel: any ByteChannel, clock: C, window: UInt32 = 4, silence: Duration = .seconds(2)) {
        self.channel = channel
        self.clock = clock
        self.window = window
        self.silence = silence
    }

    private var inFlight: UInt32 { (sent &+ DataMessage.ackModulus &- acked) % DataMessage.ackModulus }

    /// Sends one message, once the device has room for it. Throws `ChannelError.tooLong` for a
    /// message over one packet, CancellationError, or what the link throws.
    public func send(_ message: DataMessage) async throws {
        let bytes = message.encoded
        guard bytes.count <= channel.maxPacketSize else {
            throw ChannelError.tooLong(size: bytes.count, limit: channel.maxPacketSize)
        }
        while inFlight >= window {
            let before = acked
            let ticket = acks.ticket()
            let deadline = clock.now.advanced(by: silence)
            let clock = self.clock
            let acks = self.acks
            // Whichever ends the wait, the counts below say what happened.
            _ = try? await withDeadline(deadline, on: clock) { await acks.wait(after: ticket) }
            try Task.checkCancellation()
            if acked == before && clock.now >= deadline {
                acked = sent  // silent too long: take it that the device caught up
            }
        }
        sent = (sent + 1) % DataMessage.ackModulus
        try await channel.write(bytes)
    }

    /// The device's cumulative count of messages taken.
    public func acknowledge(_ count: UInt32) {
        // Only counts within the window move it (a stale or bogus count is ignored).
        let advance = (count &+ DataMessage.ackModulus &- acked) % DataMessage.ackModulus
        guard advance <= inFlight else { return }
        acked = count % DataMessage.ackModulus
        acks.pulse()
    }

    /// The scripts (re)started: their count starts at zero.
    public func reset() {
        sent = 0
        acked = 0
        acks.pulse()
    }
}
