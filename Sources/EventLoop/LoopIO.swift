// SPDX-License-Identifier: GPL-2.0-or-later
import CSystemd
import Concurrency
import Glibc

/// What a descriptor is waited for, and what it reported: epoll's bits (the same values as poll's).
public struct IOEvents: OptionSet, Sendable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    public static let readable = IOEvents(rawValue: 0x001)  // EPOLLIN
    public static let writable = IOEvents(rawValue: 0x004)  // EPOLLOUT
    public static let error = IOEvents(rawValue: 0x008)  // EPOLLERR
    public static let hangUp = IOEvents(rawValue: 0x010)  // EPOLLHUP
}

/// A descriptor the loop waits on: `handler` runs on the loop thread with what the descriptor
/// reported, each time it is ready for `events` (errors and hang-ups are always reported). Made,
/// changed and removed on the loop thread only; the descriptor stays its owner's to close (after
/// removing this). Released, it is removed.
public final class LoopIO {
    private let loop: EventLoop
    private var source: OpaquePointer?
    private var current: IOEvents

    public init(
        _ loop: EventLoop, fd: Int32, events: IOEvents, purpose: String, handler: @escaping (IOEvents) -> Void
    ) throws(ResourceError) {
        self.loop = loop
        current = events
        let box = Unmanaged.passRetained(SourceHandler { revents in handler(IOEvents(rawValue: revents)) })
        var source: OpaquePointer?
        let r = sd_event_add_io(loop.event, &source, fd, events.rawValue, ioCallback, box.toOpaque())
        guard r >= 0, let source else {
            box.release()
            throw ResourceError(call: "sd_event_add_io", purpose: purpose, errno: -r)
        }
        // From here on the source owns the handler, and lets it go when freed (after a dispatch
        // that removed it, if it was dispatching).
        sd_event_source_set_destroy_callback(source, releaseHandler)
        if events.isEmpty { sd_event_source_set_enabled(source, Int32(SD_EVENT_OFF)) }
        self.source = source
    }

    /// What the descriptor is waited for; none: not waited on until set again.
    public var events: IOEvents {
        get { current }
        set {
            guard let source, newValue != current else { return }
            precondition(loop.isOnLoopThread, "a loop source changed off the loop thread")
            current = newValue
            if newValue.isEmpty {
                sd_event_source_set_enabled(source, Int32(SD_EVENT_OFF))
            } else {
                sd_event_source_set_io_events(source, newValue.rawValue)
                sd_event_source_set_enabled(source, Int32(SD_EVENT_ON))
            }
        }
    }

    /// Stops waiting on the descriptor: the handler does not run again, even if the descriptor
    /// was ready in the same round.
    public func remove() {
        guard let source = source.take() else { return }
        precondition(loop.isOnLoopThread, "a loop source removed off the loop thread")
        sd_event_source_disable_unref(source)
    }

    deinit {
        if let source = source.take() { loop.release(source) }
    }
}

@available(*, unavailable)
extension LoopIO: Sendable {}

/// A source's handler, owned by the sd_event_source (its userdata, released by its destroy callback).
final class SourceHandler {
    let body: (UInt32) -> Void
    init(_ body: @escaping (UInt32) -> Void) { self.body = body }
}

private func ioCallback(_ source: OpaquePointer?, _ fd: Int32, _ revents: UInt32, _ userdata: UnsafeMutableRawPointer?) -> Int32 {
    guard let userdata else { return 0 }
    // A strong reference for the call: the handler may remove its own source.
    let handler = Unmanaged<SourceHandler>.fromOpaque(userdata).takeUnretainedValue()
    handler.body(revents)
    return 0
}

func releaseHandler(_ userdata: UnsafeMutableRawPointer?) {
    guard let userdata else { return }
    Unmanaged<SourceHandler>.fromOpaque(userdata).release()
}

extension EventLoop {
    /// Disables and frees `source`: here on the loop thread, else posted to it (its owner went
    /// on another thread).
    func release(_ source: OpaquePointer) {
        if isOnLoopThread {
            sd_event_source_disable_unref(source)
        } else {
            let address = UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(source)))
            post { sd_event_source_disable_unref(OpaquePointer(bitPattern: address)) }
        }
    }
}
