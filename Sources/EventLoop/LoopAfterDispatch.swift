// SPDX-License-Identifier: GPL-2.0-or-later
import CSystemd
import Concurrency
import Glibc

/// Work for after each round of the loop that dispatched something (an sd-event post source):
/// what must run outside the callbacks of a library attached to the loop, and after them (sd-bus
/// slots to drop, a bus to find closed). Never wakes an idle loop. Made and removed on the loop
/// thread; released, it is removed.
public final class LoopAfterDispatch {
    private let loop: EventLoop
    private var source: OpaquePointer?

    public init(_ loop: EventLoop, purpose: String, handler: @escaping () -> Void) throws(ResourceError) {
        self.loop = loop
        let box = Unmanaged.passRetained(SourceHandler { _ in handler() })
        var source: OpaquePointer?
        let r = sd_event_add_post(loop.event, &source, postCallback, box.toOpaque())
        guard r >= 0, let source else {
            box.release()
            throw ResourceError(call: "sd_event_add_post", purpose: purpose, errno: -r)
        }
        sd_event_source_set_destroy_callback(source, releaseHandler)
        self.source = source
    }

    public func remove() {
        guard let source = source.take() else { return }
        precondition(loop.isOnLoopThread, "a loop source removed off the loop thread")
        sd_event_source_disable_unref(source)
    }

    deinit {
        guard let source = source.take() else { return }
        if loop.isOnLoopThread {
            sd_event_source_disable_unref(source)
        } else {
            let address = UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(source)))
            loop.post { sd_event_source_disable_unref(OpaquePointer(bitPattern: address)) }
        }
    }
}

@available(*, unavailable)
extension LoopAfterDispatch: Sendable {}

private func postCallback(_ source: OpaquePointer?, _ userdata: UnsafeMutableRawPointer?) -> Int32 {
    guard let userdata else { return 0 }
    Unmanaged<SourceHandler>.fromOpaque(userdata).takeUnretainedValue().body(0)
    return 0
}
