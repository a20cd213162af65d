// SPDX-License-Identifier: GPL-2.0-or-later
import LinkKit
import Testing
import TestSupport

@Suite("Packet inbox", .timeLimit(.minutes(5)))
struct PacketInboxTests {
    @Test("packets come out in order, then the end")
    func order() async {
        let inbox = PacketInbox(capacity: 8)
        inbox.push([1])
        inbox.push([2, 3])
        inbox.finish()
        inbox.push([4])  // after the end: ignored
        var seen: [Incoming] = []
        for await item in inbox { seen.append(item) }
        #expect(seen == [.packet([1]), .packet([2, 3])])
    }

    @Test("a lagging reader is told how many packets were lost, before the newer ones")
    func overflow() async {
        let inbox = PacketInbox(capacity: 3)
        for i in 0..<10 { inbox.push([UInt8(i)]) }
        inbox.finish()
        var seen: [Incoming] = []
        for await item in inbox { seen.append(item) }
        #expect(seen == [.overflow(dropped: 7), .packet([7]), .packet([8]), .packet([9])])
    }

    @Test("a waiting reader gets a packet pushed later; cancelling the reader ends its wait")
    func waiting() async {
        let inbox = PacketInbox()
        async let first = inbox.next()
        inbox.push([42])
        #expect(await first == .packet([42]))
        let reader = Task { await inbox.next() }
        reader.cancel()
        #expect(await reader.value == nil)
        // The inbox still works for the next reader.
        inbox.push([43])
        #expect(await inbox.next() == .packet([43]))
    }

    @Test("a second reader takes the first one's place: the first ends (nil), cancelling it later leaves the second waiting, and the second gets the next packet")
    func secondReader() async {
        // As a session torn down late reads on while the next link's session starts on the same
        // channel. Before, the second wait overwrote the first (left waiting for ever) and the
        // first's cancellation ended the second's.
        let inbox = PacketInbox()
        let (ended, report) = AsyncStream.makeStream(of: (Int, Incoming?).self)
        let readers = (0..<2).map { index in
            Task {
                let value = await inbox.next()
                report.yield((index, value))
                return value
            }
        }
        var first = ended.makeAsyncIterator()
        let (displaced, value) = await first.next() ?? (-1, .packet([]))
        #expect(value == nil, "the reader put aside ends")
        let other = readers[1 - max(0, displaced)]
        readers[max(0, displaced)].cancel()
        inbox.push([7])
        #expect(await other.value == .packet([7]))
    }

    @Test("a reader with a deadline gets what comes before it, .timedOut at it, and .ended once the inbox ends")
    func deadline() async {
        let clock = ManualClock()
        let inbox = PacketInbox()
        inbox.push([1])
        #expect(await inbox.next(until: clock.now.advanced(by: .seconds(1)), on: clock) == .item(.packet([1])))
        async let late = inbox.next(until: clock.now.advanced(by: .seconds(1)), on: clock)
        await clock.sleeping()
        clock.advance(by: .seconds(1))
        #expect(await late == .timedOut)
        // Nothing was taken by the reader that timed out: the next packet is still there to read.
        inbox.push([2])
        #expect(await inbox.next(until: clock.now.advanced(by: .seconds(1)), on: clock) == .item(.packet([2])))
        inbox.finish()
        #expect(await inbox.next(until: clock.now.advanced(by: .seconds(1)), on: clock) == .ended)
    }
}
