// SPDX-License-Identifier: GPL-2.0-or-later
import Product
import Testing
import TestSupport

/// The display's one arbiter, alone: what shows when, by priority, gap, expiry and bound.
@Suite("The display's arbiter", .timeLimit(.minutes(1)))
struct DisplayArbiterTests {
    typealias Arbiter = DisplayArbiter<ManualClock>
    typealias Item = Arbiter.Item

    let t0 = ManualClock().now

    func at(_ milliseconds: Int) -> ManualClock.Instant { t0.advanced(by: .milliseconds(milliseconds)) }

    static func item(_ id: String, _ priority: Item.Priority, critical: Bool = false, expires: ManualClock.Instant? = nil) -> Item {
        Item(id: id, priority: priority, critical: critical, expires: expires)
    }

    /// The ids `next` shows at `now`, asked until it shows nothing more.
    func shown(_ arbiter: inout Arbiter, at now: ManualClock.Instant) -> [String] {
        var ids: [String] = []
        while case .show(let item) = arbiter.next(at: now) { ids.append(item.id) }
        return ids
    }

    @Test("one at a time, the highest first and the oldest among equals, each at least the gap after the last")
    func priorityAndGap() {
        var arbiter = Arbiter()
        arbiter.offer(Self.item("glance", .glance))
        arbiter.offer(Self.item("n1", .notification))
        arbiter.offer(Self.item("n2", .notification))
        #expect(arbiter.waiting.map(\.id) == ["n1", "n2", "glance"])
        #expect(arbiter.next(at: at(0)) == .show(Self.item("n1", .notification)))
        // The next waits for n1 to go, and then for the gap.
        #expect(arbiter.next(at: at(1000)) == .idle)
        arbiter.withdraw("n1")
        #expect(arbiter.next(at: at(0)) == .wait(until: at(300)))
        #expect(arbiter.next(at: at(300)) == .show(Self.item("n2", .notification)))
        arbiter.withdraw("n2")
        #expect(shown(&arbiter, at: at(600)) == ["glance"])
        #expect(arbiter.waiting.isEmpty)
    }

    @Test("a burst of notifications shows one per gap at most, not twenty in a second")
    func burst() {
        var arbiter = Arbiter()
        for n in 0..<20 { arbiter.offer(Self.item("n\(n)", .notification, expires: at(5_000))) }
        var shows: [Int] = []
        var now = 0
        while now <= 1_000 {
            switch arbiter.next(at: at(now)) {
            case .show(let item):
                shows.append(now)
                arbiter.withdraw(item.id)  // each is read at once: only the gap holds the next
            case .wait(let until):
                now = Int((t0.duration(to: until) / .milliseconds(1)).rounded(.up))
                continue
            case .idle: break
            }
            now += 1
        }
        #expect(shows == [0, 300, 600, 900], "\(shows)")
        #expect(arbiter.waiting.count == 16)
    }

    @Test("a notification waits while the answer is read, and shows when it is withdrawn; a critical one takes the display from it")
    func answerFirst() {
        var arbiter = Arbiter()
        arbiter.offer(Self.item("answer", .answer))
        #expect(shown(&arbiter, at: at(0)) == ["answer"])
        arbiter.offer(Self.item("mail", .notification))
        #expect(arbiter.next(at: at(1_000)) == .idle, "the answer is being read")
        arbiter.offer(Self.item("alarm", .notification, critical: true))
        #expect(arbiter.next(at: at(1_000)) == .show(Self.item("alarm", .notification, critical: true)))
        #expect(arbiter.waiting.map(\.id) == ["mail"], "the answer is over for the display, not queued again")
        arbiter.withdraw("alarm")
        #expect(shown(&arbiter, at: at(2_000)) == ["mail"])
    }

    @Test("a hazard takes the display from anything; what it took it from (not an answer) shows again after it")
    func hazard() {
        var arbiter = Arbiter()
        arbiter.offer(Self.item("mail", .notification))
        #expect(shown(&arbiter, at: at(0)) == ["mail"])
        arbiter.offer(Self.item("car", .hazard, expires: at(2_000)))
        #expect(shown(&arbiter, at: at(500)) == ["car"])
        arbiter.offer(Self.item("alarm", .notification, critical: true))
        #expect(arbiter.next(at: at(600)) == .wait(until: at(2_000)), "nothing outranks a hazard but its expiry")
        #expect(shown(&arbiter, at: at(2_000)) == ["alarm"])
        arbiter.withdraw("alarm")
        #expect(shown(&arbiter, at: at(2_300)) == ["mail"])
    }

    @Test("nothing but a hazard shows while the glasses are busy with a question; what waited shows after")
    func busy() {
        var arbiter = Arbiter()
        arbiter.setBusy(true)
        arbiter.offer(Self.item("mail", .notification))
        #expect(arbiter.next(at: at(0)) == .idle)
        arbiter.offer(Self.item("car", .hazard))
        #expect(shown(&arbiter, at: at(0)) == ["car"])
        arbiter.withdraw("car")
        #expect(arbiter.next(at: at(5_000)) == .idle)
        arbiter.setBusy(false)
        #expect(shown(&arbiter, at: at(5_000)) == ["mail"])
        #expect(arbiter.shown == 2)
    }

    @Test("a hazard does not wait for the gap; the answer the glasses show by themselves is occupied at once")
    func occupied() {
        var arbiter = Arbiter()
        arbiter.offer(Self.item("mail", .notification))
        #expect(shown(&arbiter, at: at(0)) == ["mail"])
        arbiter.offer(Self.item("car", .hazard))
        #expect(shown(&arbiter, at: at(10)) == ["car"])
        arbiter.withdraw("car")
        // The answer streams: it is on the display, and the notification it covered waits again.
        arbiter.occupy(Self.item("answer", .answer), at: at(20))
        #expect(arbiter.showing?.id == "answer" && arbiter.waiting.map(\.id) == ["mail"])
        #expect(arbiter.next(at: at(1_000)) == .idle)
        arbiter.expire("answer", at: at(3_000))
        #expect(arbiter.next(at: at(1_000)) == .wait(until: at(3_000)))
        #expect(shown(&arbiter, at: at(3_000)) == ["mail"])
    }

    @Test("expired items go, shown or waiting; one waiting that expires is counted; the arbiter wakes for an expiry")
    func expiry() {
        var arbiter = Arbiter()
        arbiter.offer(Self.item("mail", .notification, expires: at(1_000)))
        arbiter.offer(Self.item("chat", .notification, expires: at(500)))
        #expect(shown(&arbiter, at: at(0)) == ["mail"])
        #expect(arbiter.next(at: at(0)) == .wait(until: at(500)))
        #expect(arbiter.next(at: at(500)) == .wait(until: at(1_000)))
        #expect(arbiter.expired == 1 && arbiter.waiting.isEmpty)
        #expect(arbiter.next(at: at(1_000)) == .idle)
        #expect(arbiter.showing == nil, "the shown one expired too")
        // An answer given a reading time when it ends.
        arbiter.offer(Self.item("answer", .answer))
        #expect(shown(&arbiter, at: at(2_000)) == ["answer"])
        arbiter.offer(Self.item("mail2", .notification))
        arbiter.expire("answer", at: at(7_000))
        #expect(arbiter.next(at: at(3_000)) == .wait(until: at(7_000)))
        #expect(shown(&arbiter, at: at(7_000)) == ["mail2"])
    }

    @Test("past the bound the oldest of the lowest priority is dropped and counted; an offer with a known id replaces it")
    func bound() {
        var arbiter = Arbiter(capacity: 3)
        arbiter.offer(Self.item("glance", .glance))
        arbiter.offer(Self.item("n1", .notification))
        arbiter.offer(Self.item("n2", .notification))
        arbiter.offer(Self.item("n3", .notification))
        #expect(arbiter.waiting.map(\.id) == ["n1", "n2", "n3"] && arbiter.dropped == 1)
        arbiter.offer(Self.item("n4", .notification))
        #expect(arbiter.waiting.map(\.id) == ["n2", "n3", "n4"] && arbiter.dropped == 2)
        // The same id again: replaced where it stood, not added.
        arbiter.offer(Self.item("n3", .notification, expires: at(9_000)))
        #expect(arbiter.waiting.map(\.id) == ["n2", "n3", "n4"] && arbiter.dropped == 2)
        #expect(arbiter.waiting[1].expires == at(9_000))
    }

    @Test("past the bound a critical notification is kept over older and newer normal ones")
    func boundKeepsCritical() {
        var arbiter = Arbiter(capacity: 2)
        arbiter.offer(Self.item("fire", .notification, critical: true))
        arbiter.offer(Self.item("n1", .notification))
        arbiter.offer(Self.item("n2", .notification))
        #expect(arbiter.waiting.map(\.id) == ["fire", "n2"] && arbiter.dropped == 1)
        arbiter.offer(Self.item("smoke", .notification, critical: true))
        #expect(arbiter.waiting.map(\.id) == ["fire", "smoke"] && arbiter.dropped == 2)
        arbiter.offer(Self.item("n3", .notification))
        #expect(arbiter.waiting.map(\.id) == ["fire", "smoke"] && arbiter.dropped == 3, "the newcomer goes when all else is critical")
    }
}
