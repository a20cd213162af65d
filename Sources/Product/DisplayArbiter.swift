// SPDX-License-Identifier: GPL-2.0-or-later

/// Something that wants the glasses' display, and how much.
public struct DisplayItem<Instant: InstantProtocol>: Sendable, Equatable {
    /// Higher wins: a hazard over the answer being read, over a notification, over the glance.
    public enum Priority: Int, Sendable, Comparable, CaseIterable {
        case glance, notification, answer, hazard

        public static func < (a: Priority, b: Priority) -> Bool { a.rawValue < b.rawValue }
    }

    public let id: String
    public let priority: Priority
    /// A notification of critical urgency: it may take the display from the answer being read.
    public let critical: Bool
    /// Past this it is dropped, shown or not; nil: until it is withdrawn.
    public var expires: Instant?

    public init(id: String, priority: Priority, critical: Bool = false, expires: Instant? = nil) {
        self.id = id
        self.priority = priority
        self.critical = critical
        self.expires = expires
    }

    /// Whether it may take the display from `other` while `other` is on it.
    func outranks(_ other: DisplayItem) -> Bool {
        if priority == .hazard { return other.priority != .hazard }
        if critical && other.priority == .answer { return true }
        return priority > other.priority && other.priority != .answer
    }
}

/// The one place that decides what the glasses' display shows: every item that wants it is
/// offered here, and `next` says which one to show and when. Pure (the caller owns the clock
/// and the display): the caller offers, withdraws and says when a question is recorded, then
/// asks `next(at:)` and shows what it says, or sleeps until the instant it gives.
///
/// The rules: nothing but a hazard shows while the glasses are busy with the wearer (recording a
/// question, waiting for or streaming its answer); the item on the display stays
/// until it is withdrawn or expires unless one that outranks it comes (a hazard takes it from
/// anything, a critical notification from the answer, anything higher from a notification or the
/// glance, nothing from the answer being read); of the items waiting the highest shows, the
/// oldest first among equals; updates are at least `minimumGap` apart so a burst does not
/// flicker (a hazard does not wait for the gap); at most `capacity` wait, and past it the oldest
/// of the lowest priority (a critical one last) is dropped and counted. What the glasses show by themselves (the
/// answer, as it streams) is `occupy`'d, not offered: it is on the display already.
public struct DisplayArbiter<C: Clock>: Sendable where C.Duration == Duration {
    public typealias Item = DisplayItem<C.Instant>

    /// What to do now.
    public enum Decision: Sendable, Equatable {
        /// Put this item on the display (it is now `showing`).
        case show(Item)
        /// Nothing until then (the gap, or an expiry); then ask again.
        case wait(until: C.Instant)
        /// Nothing to do until something is offered, withdrawn or recorded.
        case idle
    }

    public let minimumGap: Duration
    public let capacity: Int
    /// On the display now, as far as the arbiter put it there.
    public private(set) var showing: Item?
    /// Waiting for the display, in the order they would show.
    public var waiting: [Item] { queue.sorted(by: before) }
    /// Dropped because too many waited.
    public private(set) var dropped = 0
    /// Dropped because they expired before they showed.
    public private(set) var expired = 0
    /// Put on the display by `next`.
    public private(set) var shown = 0

    private var queue: [Item] = []
    private var lastShown: C.Instant?
    private var busy = false
    /// Offers, in order, so that among equals the oldest shows first.
    private var order: [String: Int] = [:]
    private var offers = 0

    public init(minimumGap: Duration = .milliseconds(300), capacity: Int = 20) {
        precondition(capacity > 0)
        self.minimumGap = minimumGap
        self.capacity = capacity
    }

    /// `item` wants the display; one with the same id (shown or waiting) is replaced by it.
    public mutating func offer(_ item: Item) {
        withdraw(item.id, keepOrder: true)
        if order[item.id] == nil {
            offers += 1
            order[item.id] = offers
        }
        queue.append(item)
        while queue.count > capacity, let victim = queue.indices.min(by: { dropsFirst(queue[$0], queue[$1]) }) {
            order[queue[victim].id] = nil
            queue.remove(at: victim)
            dropped += 1
        }
    }

    /// `id` no longer wants the display (dismissed, closed, the answer's reading time over).
    public mutating func withdraw(_ id: String) { withdraw(id, keepOrder: false) }

    /// Gives the item `id` (shown or waiting) an expiry.
    public mutating func expire(_ id: String, at instant: C.Instant) {
        if showing?.id == id { showing?.expires = instant }
        for i in queue.indices where queue[i].id == id { queue[i].expires = instant }
    }

    /// The glasses are busy with the wearer: recording a question, waiting for its answer or
    /// streaming it (nothing but a hazard shows meanwhile); or no longer.
    public mutating func setBusy(_ on: Bool) { busy = on }

    /// `item` is on the display now, put there by the glasses themselves (the answer as it
    /// streams): what it took the display from waits again, as after `next`'s show.
    public mutating func occupy(_ item: Item, at now: C.Instant) {
        withdraw(item.id, keepOrder: true)
        take(item, at: now)
    }

    /// What to do at `now`.
    public mutating func next(at now: C.Instant) -> Decision {
        dropExpired(at: now)
        let soonestExpiry = ([showing] + queue).compactMap { $0?.expires }.min()
        let candidates = busy ? queue.filter { $0.priority == .hazard } : queue
        guard let best = candidates.min(by: before), showing.map({ best.outranks($0) }) ?? true else {
            return soonestExpiry.map { .wait(until: $0) } ?? .idle
        }
        if best.priority != .hazard, let last = lastShown, now < last.advanced(by: minimumGap) {
            return .wait(until: last.advanced(by: minimumGap))
        }
        queue.removeAll { $0.id == best.id }
        take(best, at: now)
        shown += 1
        return .show(best)
    }

    private mutating func take(_ item: Item, at now: C.Instant) {
        // What it took the display from waits again (a notification behind a hazard), unless it
        // was the answer being read: that one is over for the display.
        if let current = showing, current.priority != .answer, current.id != item.id { queue.append(current) }
        showing = item
        lastShown = now
    }

    private mutating func withdraw(_ id: String, keepOrder: Bool) {
        if showing?.id == id { showing = nil }
        queue.removeAll { $0.id == id }
        if !keepOrder { order[id] = nil }
    }

    /// Lets go of what expired by `now` (as `next` does first).
    public mutating func prune(at now: C.Instant) { dropExpired(at: now) }

    private mutating func dropExpired(at now: C.Instant) {
        if let expires = showing?.expires, expires <= now { showing = nil }
        let before = queue.count
        queue.removeAll { item in item.expires.map { $0 <= now } ?? false }
        expired += before - queue.count
    }

    private func rank(_ item: Item) -> Int { order[item.id] ?? Int.max }

    /// Higher priority first (critical before not, within one), then the oldest offer.
    /// Which of two waiting items goes first when too many wait: the lower priority, a
    /// critical one last among equals, then the older.
    private func dropsFirst(_ a: Item, _ b: Item) -> Bool {
        if a.priority != b.priority { return a.priority < b.priority }
        if a.critical != b.critical { return b.critical }
        return rank(a) < rank(b)
    }

    private func before(_ a: Item, _ b: Item) -> Bool {
        if a.priority != b.priority { return a.priority > b.priority }
        if a.critical != b.critical { return a.critical }
        return rank(a) < rank(b)
    }
}
