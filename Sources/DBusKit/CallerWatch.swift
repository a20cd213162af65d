// SPDX-License-Identifier: GPL-2.0-or-later
import CSystemd
import Synchronization

/// Fires once, when the caller of an incoming method call leaves the bus; the task serving the
/// call waits on it to cancel the handler. Sendable: fired on the bus thread, awaited anywhere.
final class CallerGone: Sendable {
    private struct State {
        var fired = false
        var cancelled = false
        var waiter: CheckedContinuation<Void, Never>?
    }

    private let state = Mutex(State())

    func fire() {
        state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.fired = true
            defer { state.waiter = nil }
            return state.waiter
        }?.resume()
    }

    /// Returns when fired, or when the waiting task is cancelled; one waiter at a time.
    func wait() async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let now = state.withLock { state in
                    if state.fired || state.cancelled { return true }
                    state.waiter = continuation
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            state.withLock { state -> CheckedContinuation<Void, Never>? in
                state.cancelled = true
                defer { state.waiter = nil }
                return state.waiter
            }?.resume()
        }
    }
}

/// Watches one unique name that has incoming calls in flight, so they can be given up when it
/// leaves the bus: a NameOwnerChanged match on it (arg0), and a GetNameOwner sent right after,
/// for a caller that left before the match was in place (the bus handles our AddMatch and
/// GetNameOwner in order, so one of the two sees it go). Confined to the bus thread; reached from
/// the callbacks through userdata, so it lives until its slots are dropped.
final class CallerWatch {
    unowned let state: BusState
    let name: String
    var calls: Set<UInt64> = []
    private var slots: [OpaquePointer] = []

    init(name: String, state: BusState) {
        self.name = name
        self.state = state
    }

    /// Starts watching; if the bus refuses (it limits match rules per connection), the calls
    /// simply run to the end as if nobody watched.
    func start(on bus: OpaquePointer) {
        let me = Unmanaged.passUnretained(self).toOpaque()
        let rule =
            "type='signal',sender='org.freedesktop.DBus',path='/org/freedesktop/DBus',"
            + "interface='org.freedesktop.DBus',member='NameOwnerChanged',arg0='\(name)'"
        var slot: OpaquePointer?
        guard sd_bus_add_match_async(bus, &slot, rule, nameOwnerChanged, ignoreReply, me) >= 0 else { return }
        if let slot { slots.append(slot) }
        var m: OpaquePointer?
        guard
            sd_bus_message_new_method_call(
                bus, &m, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "GetNameOwner") >= 0,
            let m
        else { return }
        defer { sd_bus_message_unref(m) }
        guard (try? MessageWriter.append(.string(name), to: m)) != nil else { return }
        var check: OpaquePointer?
        if sd_bus_call_async(bus, &check, m, nameOwnerReply, me, 0) >= 0, let check { slots.append(check) }
    }

    /// Drops the match and any outstanding GetNameOwner (not from inside their own callbacks:
    /// `BusState` buries finished watches after dispatching).
    func stop() {
        for slot in slots { sd_bus_slot_unref(slot) }
        slots.removeAll()
    }
}

private let nameOwnerChanged: sd_bus_message_handler_t = { m, userdata, _ in
    guard let m, let userdata else { return 0 }
    let watch = Unmanaged<CallerWatch>.fromOpaque(userdata).takeUnretainedValue()
    guard let arguments = try? MessageReader.readAll(m), arguments.count == 3,
        arguments[0].string == watch.name, arguments[2].string == ""
    else { return 0 }
    watch.state.callerLeft(watch)
    return 0
}

private let nameOwnerReply: sd_bus_message_handler_t = { m, userdata, _ in
    guard let m, let userdata else { return 0 }
    let watch = Unmanaged<CallerWatch>.fromOpaque(userdata).takeUnretainedValue()
    // NameHasNoOwner: gone already. Any other answer: still here, or unknown; the match watches on.
    if sd_bus_message_is_method_error(m, "org.freedesktop.DBus.Error.NameHasNoOwner") > 0 {
        watch.state.callerLeft(watch)
    }
    return 0
}

private let ignoreReply: sd_bus_message_handler_t = { _, _, _ in 0 }
