// SPDX-License-Identifier: GPL-2.0-or-later

/// What the reader of a connection's messages has yet to take, in messages and bytes. The stream
/// bounds the count itself (its buffer holds at most `maximumMessages`) and says how many wait
/// after each yield; the waiting ones are the last that many yielded, whose sizes this keeps.
struct InboundBacklog {
    /// A reader that falls this far behind is not keeping up: at 50 messages a second (the agent's
    /// busiest), 20 s of them; a server sending faster than that is flooding.
    static let defaultMaximumMessages = 1024
    /// Twice the largest message: two such may wait, not a flood of them.
    static let defaultMaximumBytes = 2 * FrameDecoder.defaultMaximumMessageSize

    let maximumMessages: Int
    let maximumBytes: Int
    /// Sizes of the messages yielded, oldest first from `first`.
    private var sizes: [Int] = []
    private var first = 0
    private(set) var bytes = 0

    init(maximumMessages: Int = defaultMaximumMessages, maximumBytes: Int = defaultMaximumBytes) {
        self.maximumMessages = max(1, maximumMessages)
        self.maximumBytes = maximumBytes
    }

    var waiting: Int { sizes.count - first }

    /// A message of `size` bytes was yielded, and now `queued` wait (it among them). False when
    /// the bytes waiting are over the maximum.
    mutating func yielded(size: Int, queued: Int) -> Bool {
        sizes.append(size)
        bytes += size
        while waiting > max(0, queued) {
            bytes -= sizes[first]
            first += 1
        }
        if first > 256 && first * 2 > sizes.count {
            sizes.removeFirst(first)
            first = 0
        }
        return bytes <= maximumBytes
    }
}
