// SPDX-License-Identifier: GPL-2.0-or-later

/// The frames a connection has yet to write, in order, each with the sender waiting on it. Pure
/// bookkeeping: the connection's loop writes the head and reports how far it got.
struct OutgoingQueue {
    enum Kind {
        case message
        case pong
        case close
    }

    struct Item {
        var bytes: [UInt8]
        var kind: Kind
        var id: UInt64?
        var done: SocketThread.Completion?
        var written = 0
        /// A write of it was tried. Over TLS that pins it: OpenSSL keeps the record it made, and
        /// the same bytes must be offered again before any others.
        var attempted = false
    }

    private(set) var items: [Item] = []
    /// Whether a tried write pins the head (TLS) or only bytes written do (a plain socket).
    let triedWritesPin: Bool

    init(triedWritesPin: Bool) {
        self.triedWritesPin = triedWritesPin
    }

    var isEmpty: Bool { items.isEmpty }
    var count: Int { items.count }

    /// The head has begun going out: nothing may go before it, and it cannot be taken back.
    var headBegun: Bool {
        guard let head = items.first else { return false }
        return head.written > 0 || (triedWritesPin && head.attempted)
    }

    mutating func append(_ item: Item) {
        items.append(item)
    }

    /// Takes back send `id` if it has not begun (half a frame would break the stream).
    mutating func takeBack(id: UInt64) -> Item? {
        guard let index = items.firstIndex(where: { $0.id == id }), index > 0 || !headBegun else { return nil }
        return items.remove(at: index)
    }

    /// A ping's answer goes ahead of queued messages, but never into a frame under way. A pong
    /// still waiting is replaced rather than joined: RFC 6455 §5.5.3 lets an endpoint answer only
    /// the latest ping, so a flood of pings leaves one pong queued, not one per ping.
    mutating func enqueuePong(_ bytes: [UInt8]) {
        let start = headBegun ? 1 : 0
        if let waiting = items[start...].firstIndex(where: { $0.kind == .pong }) {
            items[waiting].bytes = bytes
            return
        }
        items.insert(Item(bytes: bytes, kind: .pong), at: min(start, items.count))
    }

    /// Drops every frame not yet begun (the peer closed) and gives their senders.
    mutating func dropUnbegun() -> [SocketThread.Completion] {
        let kept = headBegun ? 1 : 0
        defer { items.removeSubrange(kept...) }
        return items[kept...].compactMap(\.done)
    }

    /// Empties the queue, giving every sender still waiting.
    mutating func removeAll() -> [SocketThread.Completion] {
        defer { items.removeAll() }
        return items.compactMap(\.done)
    }

    /// Notes a write of the head: `count` more bytes went out (0: it would block). The head,
    /// once all written.
    mutating func wrote(_ count: Int) -> Item? {
        items[0].attempted = true
        items[0].written += count
        guard items[0].written == items[0].bytes.count else { return nil }
        return items.removeFirst()
    }
}

@available(*, unavailable)
extension OutgoingQueue: Sendable {}
