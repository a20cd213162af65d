// SPDX-License-Identifier: GPL-2.0-or-later
import Concurrency
import Foundation
import Glasses
import Logging

/// The glasses' display, owned in one place. Everything that writes on it goes through here:
/// answers (as they stream, and their reading time after), scene mode's hazard alert, Device1's
/// Display text, desktop notifications and the glance. The DisplayArbiter decides what shows
/// when; the desk does it, and is the session the rest of glassd talks to (DisplayDesk+Session:
/// every other request passes through unchanged).
public actor DisplayDesk<C: Clock> where C.Duration == Duration {
    public struct Settings: Sendable {
        /// At least this between two updates the desk makes (`[display] minimum_gap_ms`).
        public var minimumGap: Duration
        /// How long a notification may wait to show, unless it says (`notification_wait_seconds`).
        public var notificationWait: Duration
        public var notificationsKept: Int
        /// How long the glance stays (`glance_seconds`).
        public var glanceTime: Duration
        /// How long Display's text may wait for the display.
        public var messageWait: Duration

        public init(
            minimumGap: Duration = .milliseconds(300), notificationWait: Duration = .seconds(60), notificationsKept: Int = 100,
            glanceTime: Duration = .seconds(8), messageWait: Duration = .seconds(30)
        ) {
            self.minimumGap = minimumGap
            self.notificationWait = notificationWait
            self.notificationsKept = notificationsKept
            self.glanceTime = glanceTime
            self.messageWait = messageWait
        }
    }

    /// One entry of DisplayQueue: the one showing first, then what waits in order.
    public struct QueueEntry: Sendable, Equatable {
        public let id: String
        /// hazard, answer, notification, message or glance.
        public let what: String
        public let showing: Bool
    }

    typealias Item = DisplayItem<C.Instant>

    /// What the desk writes when an item it was offered shows.
    enum Content: Sendable {
        case notification(UInt32)
        case message(String)
        case glance
    }

    let inner: any GlassesSession
    let clock: C
    let settings: Settings
    let logger: Logger
    /// What the glance says beyond what the desk knows (the backend, the calendar).
    let glanceFacts: @Sendable () async -> GlanceFacts
    /// The desktop calendar's next event, as its agent last said.
    var nextEvent: CalendarEntry?
    var arbiter: DisplayArbiter<C>
    public private(set) var notifications: NotificationBook
    var contents: [String: Content] = [:]
    /// Until when each waiting notification may wait.
    var deadlines: [UInt32: C.Instant] = [:]
    let pulse = Pulse()
    /// Told when the queue or its counts change (DisplayQueue, DisplayStats).
    var onChange: (@Sendable () -> Void)?
    var lastPublished: ([QueueEntry], [UInt32])?
    /// The glasses were not free for a write the arbiter allowed: nothing more until their state changes.
    var heldUntilStatus = false
    var glassesBusy = true
    /// The newest live screen a hazard or critical notification kept off the display.
    var pendingLive: String?

    public init(
        session: any GlassesSession, clock: C, settings: Settings = Settings(), logger: Logger,
        glanceFacts: @escaping @Sendable () async -> GlanceFacts = { GlanceFacts() }
    ) {
        inner = session
        self.clock = clock
        self.settings = settings
        self.logger = logger
        self.glanceFacts = glanceFacts
        arbiter = DisplayArbiter(minimumGap: settings.minimumGap)
        notifications = NotificationBook(capacity: settings.notificationsKept)
    }

    public func setOnChange(_ body: @escaping @Sendable () -> Void) { onChange = body }

    // MARK: What callers offer

    /// Keeps a notification from `sender` and offers it to the display; returns its id.
    public func notify(_ fields: DesktopNotification.Fields, from sender: String) -> UInt32 {
        let (id, _) = notifications.add(fields, from: sender, at: Self.unixMS())
        let wait: Duration? = fields.wait ?? (fields.urgency == .critical ? nil : settings.notificationWait)
        let key = Self.key(id)
        contents[key] = .notification(id)
        deadlines[id] = wait.map { clock.now.advanced(by: $0) }
        arbiter.offer(Item(id: key, priority: .notification, critical: fields.urgency == .critical, expires: deadlines[id]))
        settle()
        return id
    }

    /// The desktop closed `sender`'s notification `desktopID`.
    public func close(desktopID: UInt32, from sender: String) {
        guard let id = notifications.id(desktopID: desktopID, from: sender) else { return }
        end(id, as: .closed)
    }

    /// Dismisses notification `id` (0: all); false when there is none such.
    public func dismiss(_ id: UInt32) -> Bool {
        let ids = id == 0 ? notifications.kept.map(\.id) : [id]
        guard id == 0 || notifications.notification(id) != nil else { return false }
        for id in ids where notifications.notification(id).map({ $0.state != .closed && $0.state != .dismissed }) ?? false {
            end(id, as: .dismissed)
        }
        return true
    }

    /// Shows the glance when the display is free; returns its text.
    public func glance() async -> String {
        let text = await glanceText()
        contents["glance"] = .glance
        arbiter.offer(Item(id: "glance", priority: .glance, expires: clock.now.advanced(by: settings.messageWait)))
        settle()
        return text
    }

    /// Display's text: shown when the display is free, in place of any Display text still waiting.
    func message(_ text: String) {
        contents["message"] = .message(text)
        arbiter.offer(Item(id: "message", priority: .notification, expires: clock.now.advanced(by: settings.messageWait)))
        settle()
    }

    // MARK: What the desk shows

    /// Runs until cancelled: follows the glasses' state and shows what the arbiter says when it says.
    public func run() async {
        let events = inner.subscribe()
        glassesBusy = await inner.current.state != .ready
        arbiter.setBusy(glassesBusy)
        await withDiscardingTaskGroup { group in
            group.addTask { await self.follow(events) }
            group.addTask { await self.show() }
        }
    }

    private func follow(_ events: AsyncStream<SessionEvent>) async {
        for await event in events {
            switch event {
            case .status(let status):
                glassesBusy = status.state != .ready
                heldUntilStatus = false
            case .glasses(.questionStart):
                // A new question: the last answer's reading is over, and a live screen kept back too.
                arbiter.withdraw("answer")
                pendingLive = nil
            case .glasses(.glance):
                _ = await glance()
            default: continue
            }
            settle()
        }
    }

    private func show() async {
        while !Task.isCancelled {
            let ticket = pulse.ticket()
            arbiter.prune(at: clock.now)
            if let text = pendingLive, !liveHeldBack {
                // What kept the live screen back is over: it shows before anything that waited.
                try? await live(text)
                continue
            }
            switch decide() {
            case .show(let item): await write(item)
            case .wait(let until):
                await withTaskGroup(of: Void.self) { group in
                    group.addTask { [clock] in try? await clock.sleep(until: until, tolerance: nil) }
                    group.addTask { [pulse] in await pulse.wait(after: ticket) }
                    await group.next()
                    group.cancelAll()
                }
            case .idle: await pulse.wait(after: ticket)
            }
        }
    }

    private func decide() -> DisplayArbiter<C>.Decision {
        arbiter.setBusy(glassesBusy || heldUntilStatus)
        let decision = arbiter.next(at: clock.now)
        bookKeeping()
        return decision
    }

    /// Writes `item` (the arbiter put it on the display) and gives it its time there.
    private func write(_ item: Item) async {
        guard let content = contents[item.id] else { return }
        let (heading, body, time) = await words(content)
        do {
            try await Self.claimAndShow(heading: heading, body: body, on: inner)
        } catch {
            // Busy or away after all: it waits again, and the desk until the glasses' state changes.
            logger.debug("the glasses did not take \(item.id): \(error)")
            arbiter.withdraw(item.id)
            arbiter.offer(item)
            heldUntilStatus = true
            settle()
            return
        }
        // Unless it was closed or dismissed while it was written.
        if case .notification(let id) = content, notifications.notification(id)?.state == .waiting {
            notifications.set(id, .shown)
            deadlines[id] = nil
        }
        if arbiter.showing?.id == item.id { arbiter.expire(item.id, at: clock.now.advanced(by: time)) }
        settle()
    }

    /// The heading, text and time on the display of `content`.
    private func words(_ content: Content) async -> (String, String, Duration) {
        switch content {
        case .message(let text): return ("", text, readingTime(text.count, least: .seconds(3), most: .seconds(15)))
        case .glance: return ("", await glanceText(), settings.glanceTime)
        case .notification(let id):
            guard let n = notifications.notification(id) else { return ("", "", .zero) }
            let more = arbiter.waiting.filter { $0.priority == .notification }.count
            return NotificationText.shown(n, more: more)
        }
    }

    /// A stream the glasses take only when idle (so it never cuts a question or an answer), with
    /// `heading` and `body`, written whole.
    static func claimAndShow(heading: String, body: String, on session: any GlassesSession) async throws {
        let stream = try await session.answerStream(claim: true)
        stream.heading(heading)
        stream.append(body)
        stream.finish()
        do {
            try await stream.run()
        } catch {
            await session.answerFinished(stream)
            throw error
        }
        await session.answerFinished(stream)
    }

    // MARK: Keeping count

    private func end(_ id: UInt32, as state: DesktopNotification.State) {
        notifications.set(id, state)
        arbiter.withdraw(Self.key(id))
        contents[Self.key(id)] = nil
        deadlines[id] = nil
        settle()
    }

    /// Notifications the arbiter let go unshown are expired or dropped; the change is told.
    private func bookKeeping() {
        let present = Set(arbiter.waiting.map(\.id) + [arbiter.showing?.id].compactMap { $0 })
        let now = clock.now
        for n in notifications.waiting where !present.contains(Self.key(n.id)) {
            let expired = deadlines[n.id].map { $0 <= now } ?? false
            notifications.set(n.id, expired ? .expired : .dropped)
            deadlines[n.id] = nil
        }
        // What left the display or the queue needs nothing more (a long run keeps no trail).
        contents = contents.filter { present.contains($0.key) }
        let snapshot = (queue, notifications.kept.map(\.id))
        if lastPublished.map({ $0.0 != snapshot.0 || $0.1 != snapshot.1 }) ?? true {
            lastPublished = snapshot
            onChange?()
        }
    }

    /// Lets go of what expired by now (before DisplayQueue is read).
    public func refresh() {
        arbiter.prune(at: clock.now)
        settle()
    }

    /// Something changed: decide again.
    func settle() {
        bookKeeping()
        pulse.pulse()
    }

    public var queue: [QueueEntry] {
        let showing = arbiter.showing.map { [QueueEntry(id: $0.id, what: Self.what($0, contents), showing: true)] } ?? []
        return showing + arbiter.waiting.map { QueueEntry(id: $0.id, what: Self.what($0, contents), showing: false) }
    }

    /// (shown, dropped, expired) since start.
    public var counts: (shown: Int, dropped: Int, expired: Int) { (arbiter.shown, arbiter.dropped, arbiter.expired) }

    static func what(_ item: Item, _ contents: [String: Content]) -> String {
        switch item.priority {
        case .hazard: "hazard"
        case .answer: "answer"
        case .glance: "glance"
        case .notification: if case .message = contents[item.id] { "message" } else { "notification" }
        }
    }

    static func key(_ id: UInt32) -> String { "notification/\(id)" }

    static func unixMS() -> Int64 { Int64(Date().timeIntervalSince1970 * 1000) }
}
