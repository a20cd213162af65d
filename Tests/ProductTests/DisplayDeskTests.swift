// SPDX-License-Identifier: GPL-2.0-or-later
import Glasses
import Logging
import Product
import Synchronization
import Testing
import TestSupport

/// The display desk over glasses in memory and a manual clock: notifications wait for the answer's
/// reading time, for busy glasses and for the gap; a critical one does not wait for the answer.
@Suite("The display desk", .timeLimit(.minutes(1)))
struct DisplayDeskTests {
    let glasses = FakeGlasses()
    let clock = ManualClock()
    let desk: DisplayDesk<ManualClock>

    init() {
        desk = DisplayDesk(session: glasses, clock: clock, logger: Logger(label: "test"))
    }

    /// Runs `body` with the desk running (and the glasses ready).
    func running(_ body: () async -> Void) async {
        await withDiscardingTaskGroup { group in
            group.addTask { await desk.run() }
            await body()
            group.cancelAll()
        }
    }

    /// The headings the glasses were given (each write of the desk, or an answer, starts with one).
    func headings() -> [String] {
        glasses.record.withLock { $0.pieces.compactMap { if case .heading(let h) = $0 { h } else { nil } } }
    }

    func waitForHeadings(_ count: Int) async {
        await glasses.wait { record in record.pieces.filter { if case .heading = $0 { true } else { false } }.count >= count }
    }

    static func mail(_ summary: String, urgency: DesktopNotification.Urgency = .normal, desktopID: UInt32 = 0) -> DesktopNotification.Fields {
        DesktopNotification.Fields(appName: "Mail", summary: summary, body: "<b>Hi</b> &amp; bye", urgency: urgency, desktopID: desktopID)
    }

    @Test("a notification on idle glasses shows at once, its markup as text, and is no longer unread")
    func showsOnIdle() async {
        await running {
            let id = await desk.notify(Self.mail("Lunch?"), from: ":1.5")
            await waitForHeadings(1)
            #expect(headings() == ["Mail: Lunch?\n"])
            #expect(glasses.record.withLock { $0.pieces.contains(.text("Hi & bye")) })
            await glasses.wait { $0.finishedAnswers == 1 }
            #expect(await desk.notifications.notification(id)?.state == .shown)
        }
    }

    @Test("a notification waits while the glasses are busy and while the answer is read; a critical one only for busy glasses")
    func waitsForTheAnswer() async {
        await running {
            glasses.emit(.status(SessionStatus(state: .busy)))
            let stream = try? await desk.answerStream(claim: false)
            _ = await desk.notify(Self.mail("Later"), from: ":1.5")
            #expect(await desk.queue.map(\.what) == ["answer", "notification"])
            glasses.emit(.status(SessionStatus(state: .ready)))
            stream?.append("Paris is the capital of France.")
            await desk.answerFinished(stream)
            // The reading time (2 s and 50 ms a character, at least 4 s) holds it.
            await clock.sleeping()
            #expect(headings().isEmpty)
            _ = await desk.notify(Self.mail("Fire drill", urgency: .critical), from: ":1.5")
            clock.advance(by: .milliseconds(300))  // the gap after the answer's own update
            await waitForHeadings(1)
            #expect(headings() == ["Mail: Fire drill\n"])
            let shownUntil = await clock.nextDeadline(within: .seconds(20))
            #expect(clock.now.duration(to: shownUntil) == .milliseconds(3_600), "its reading time, \"+1 more\" included")
            clock.advance(to: shownUntil)
            await waitForHeadings(2)
            #expect(headings().last == "Mail: Later\n")
        }
    }

    @Test("an agent's live screen holds the display as an answer does: a notification waits for its reading time after the last update")
    func liveScreen() async {
        await running {
            try? await desk.live("> hi\nHello there")
            _ = await desk.notify(Self.mail("Later"), from: ":1.5")
            #expect(await desk.queue.map(\.what) == ["answer", "notification"])
            var until = await clock.nextDeadline(within: .seconds(60))
            #expect(clock.now.duration(to: until) == .seconds(4), "the least reading time")
            clock.advance(by: .seconds(3))
            try? await desk.live("> hi\nHello there, and more words than before to read")
            clock.advance(by: .seconds(1))  // the first screen's time: the notification still waits
            until = await clock.nextDeadline(within: .seconds(60))
            #expect(clock.now.duration(to: until) == .milliseconds(3_600), "the new screen's reading time, from its update")
            #expect(headings() == ["> hi\nHello there", "> hi\nHello there, and more words than before to read"])
            clock.advance(to: until)
            await waitForHeadings(3)
            #expect(headings().last == "Mail: Later\n")
        }
    }

    @Test("a critical notification over a live screen keeps the display for its time: the screen's updates meanwhile wait, the newest shows after it")
    func criticalOverLiveScreen() async {
        await running {
            try? await desk.live("> hi\nfirst")
            _ = await desk.notify(Self.mail("Fire drill", urgency: .critical), from: ":1.5")
            await clock.sleeping()
            clock.advance(by: .milliseconds(300))  // the gap after the screen's update
            await waitForHeadings(2)
            await glasses.wait { $0.finishedAnswers == 1 }
            #expect(headings().last == "Mail: Fire drill\n")
            try? await desk.live("> hi\nsecond")
            try? await desk.live("> hi\nthird")
            #expect(headings().count == 2, "not written over the critical one: \(headings())")
            let shownUntil = await clock.nextDeadline(within: .seconds(20))
            clock.advance(to: shownUntil)
            await waitForHeadings(3)
            #expect(headings() == ["> hi\nfirst", "Mail: Fire drill\n", "> hi\nthird"])
            #expect(await desk.queue.map(\.what) == ["answer"])
        }
    }

    @Test("a burst shows one at a time, at least the gap apart, the first saying how many more wait")
    func burst() async {
        await running {
            // A hazard holds the display (at once, unlike a status the desk hears of later) while they come.
            try? await desk.showAlert("Careful")
            for n in 0..<20 { _ = await desk.notify(DesktopNotification.Fields(appName: "Chat", summary: "m\(n)"), from: ":1.5") }
            try? await desk.showAlert(nil)
            await clock.sleeping()
            clock.advance(by: .milliseconds(300))  // the gap after the hazard's update
            await waitForHeadings(1)
            // The heading is written before the body: wait for the whole write.
            await glasses.wait { $0.finishedAnswers == 1 }
            #expect(glasses.record.withLock { $0.pieces.contains(.text("+19 more")) })
            #expect(await desk.queue.count == 20)
            // Each stays its reading time (at least 3 s): none more until then.
            await clock.sleeping()
            clock.advance(by: .milliseconds(2_900))
            #expect(headings() == ["Chat: m0\n"])
            clock.advance(by: .milliseconds(100))
            await waitForHeadings(2)
            #expect(headings().last == "Chat: m1\n")
            #expect(await desk.counts.shown == 2)
        }
    }

    @Test("closed and dismissed notifications leave the queue and keep their state; the waiting one expires unshown")
    func closeDismissExpire() async {
        await running {
            glasses.emit(.status(SessionStatus(state: .busy)))
            let closed = await desk.notify(Self.mail("a", desktopID: 7), from: ":1.5")
            var other = Self.mail("b")
            other.desktopID = 8
            let dismissed = await desk.notify(other, from: ":1.5")
            other.desktopID = 9
            other.wait = .seconds(5)
            let expiring = await desk.notify(other, from: ":1.5")
            await desk.close(desktopID: 7, from: ":1.6")  // another sender's id 7: not this one
            #expect(await desk.notifications.notification(closed)?.state == .waiting)
            await desk.close(desktopID: 7, from: ":1.5")
            #expect(await desk.dismiss(dismissed))
            #expect(await desk.dismiss(999) == false)
            clock.advance(by: .seconds(5))
            await desk.refresh()
            #expect(await desk.notifications.notification(closed)?.state == .closed)
            #expect(await desk.notifications.notification(dismissed)?.state == .dismissed)
            #expect(await desk.notifications.notification(expiring)?.state == .expired)
            #expect(await desk.queue.isEmpty)
            #expect(await desk.counts.expired == 1)
        }
    }

    @Test("the glance gesture shows, after the notifications, the time, the unread count and the newest summary")
    func glance() async {
        await running {
            _ = await desk.notify(Self.mail("Standup moved"), from: ":1.5")
            await waitForHeadings(1)
            _ = await desk.notify(Self.mail("Second"), from: ":1.6")
            glasses.emit(.glasses(.glance))
            await clock.sleeping()
            clock.advance(by: .milliseconds(3_500))
            await waitForHeadings(2)
            await clock.sleeping()
            clock.advance(by: .milliseconds(3_500))
            await glasses.wait { record in
                record.pieces.contains { if case .text(let t) = $0 { t.contains("unread") } else { false } }
            }
            let pieces = glasses.record.withLock { $0.pieces }
            let last = pieces.lastIndex { if case .heading = $0 { true } else { false } } ?? 0
            let text = pieces[last...].compactMap { if case .text(let t) = $0 { t } else { nil } }.joined()
            #expect(text.contains("\n2 unread: Second"), "\(text)")
            #expect(text.firstMatch(of: /^\d\d:\d\d/) != nil, "the time first: \(text)")
            #expect(await desk.counts.shown == 3)
        }
    }
}

@Suite("Notification text")
struct NotificationTextTests {
    @Test("markup is shown as its text", arguments: [
        ("<b>bold</b> and <i>it</i>", "bold and it"),
        ("a &lt;tag&gt; &amp; &quot;q&quot; &#65;&#x42;", "a <tag> & \"q\" AB"),
        ("<a href=\"https://x\">link</a>\n\n  spaced", "link spaced"),
        ("&unknown; & alone", "&unknown; & alone"),
        ("<img src=\"x\"/>", ""),
    ])
    func plain(markup: String, text: String) {
        #expect(NotificationText.plain(markup) == text)
    }

    @Test("a book keeps the newest, replaces by the sender's desktop id, and counts the unread")
    func book() {
        var book = NotificationBook(capacity: 3)
        let a = book.add(.init(summary: "a", desktopID: 1), from: ":1.1", at: 1)
        let b = book.add(.init(summary: "b", desktopID: 1), from: ":1.2", at: 2)
        #expect(a.id != b.id && !b.replaced)
        let a2 = book.add(.init(summary: "a2", desktopID: 1), from: ":1.1", at: 3)
        #expect(a2 == (a.id, true))
        _ = book.add(.init(summary: "c"), from: ":1.1", at: 4)
        _ = book.add(.init(summary: "d"), from: ":1.1", at: 5)
        #expect(book.newest(0).map(\.fields.summary) == ["d", "c", "b"])
        book.set(b.id, .shown)
        #expect(book.waiting.map(\.fields.summary) == ["c", "d"])
        book.set(b.id, .closed)
        book.set(book.newest(1)[0].id, .dismissed)
        #expect(book.unread.map(\.fields.summary) == ["c"], "shown is unread still; closed and dismissed are not")
        #expect(book.newest(1).map(\.fields.summary) == ["d"])
    }
}
