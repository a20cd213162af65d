// SPDX-License-Identifier: GPL-2.0-or-later
import Synchronization

/// Hands every published value to every current subscriber, each through its own stream:
/// unbounded by default (link events are rare and none may be lost).
public final class Broadcast<Element: Sendable>: Sendable {
    private struct Subscribers {
        var next: UInt64 = 0
        var all: [UInt64: AsyncStream<Element>.Continuation] = [:]
    }

    private let subscribers = Mutex(Subscribers())

    public init() {}

    /// A new subscription; `first`, if any, is its first element.
    public func subscribe(
        first: Element? = nil, bufferingPolicy: AsyncStream<Element>.Continuation.BufferingPolicy = .unbounded
    ) -> AsyncStream<Element> {
        let (stream, continuation) = AsyncStream.makeStream(of: Element.self, bufferingPolicy: bufferingPolicy)
        if let first { continuation.yield(first) }
        let id = subscribers.withLock { s in
            defer { s.next += 1 }
            s.all[s.next] = continuation
            return s.next
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.subscribers.withLock { $0.all.removeValue(forKey: id) }
        }
        return stream
    }

    public func publish(_ value: Element) {
        for continuation in subscribers.withLock({ Array($0.all.values) }) { continuation.yield(value) }
    }
}
