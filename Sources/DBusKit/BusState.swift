// SPDX-License-Identifier: GPL-2.0-or-later
import CSystemd

/// The part of a connection's state that C callbacks reach directly: method calls waiting for
/// their reply. Owned by `BusConnection` and confined, like it, to the bus thread.
final class BusState {
    struct PendingReply {
        var message: OpaquePointer
        var outputSignature: String
        var sender: String
        var callerGone: CallerGone
    }

    struct IncomingCall: Sendable {
        var id: UInt64
        var call: MethodCall
        var handler: @Sendable (MethodCall) async throws -> [DBusValue]
        /// Fires if the caller leaves the bus before its reply is sent.
        var callerGone: CallerGone
    }

    /// Unique names with calls in flight, each watched for leaving the bus. A watch outlives its
    /// calls, so a client that calls again costs no new match rule or GetNameOwner; at most
    /// `maxIdleWatches` idle ones are kept (the oldest go first).
    private var watches: [String: CallerWatch] = [:]
    private var idleWatches: [String] = []
    static let maxIdleWatches = 64
    /// Watches no longer needed, whose slots are dropped after dispatching (`buryWatches()`).
    private var finishedWatches: [CallerWatch] = []

    private var pending: [UInt64: PendingReply] = [:]
    /// Our own calls waiting for replies (they hold the only strong reference to each).
    private var calls: [UInt64: PendingCall] = [:]
    private var nextID: UInt64 = 1
    private let incoming: AsyncStream<IncomingCall>.Continuation
    /// At most this many incoming calls wait for their reply (queued or running) at once.
    let maxPendingCalls: Int

    init(incoming: AsyncStream<IncomingCall>.Continuation, maxPendingCalls: Int) {
        self.incoming = incoming
        self.maxPendingCalls = maxPendingCalls
    }

    func makeID() -> UInt64 {
        defer { nextID += 1 }
        return nextID
    }

    /// Called by the method trampoline: queue the call for `BusConnection.serve()`, answer it later.
    /// Beyond `maxPendingCalls` unanswered calls, refuses at once with `LimitsExceeded`: callers
    /// decide how many calls they make, so the queue must not grow with them (the sd-bus rule on
    /// user-controllable resources).
    func accept(
        call m: OpaquePointer, for object: ExportedObject, error retError: UnsafeMutablePointer<sd_bus_error>?
    ) -> Int32 {
        let member = sd_bus_message_get_member(m).map { String(cString: $0) } ?? ""
        guard let method = object.method(named: member) else {
            return sd_bus_error_set(retError, "org.freedesktop.DBus.Error.UnknownMethod", "no method \(member)")
        }
        guard pending.count < maxPendingCalls else {
            return sd_bus_error_set(
                retError, BusError.limitsExceeded, "\(maxPendingCalls) calls are already waiting for a reply")
        }
        let arguments: [DBusValue]
        do {
            arguments = try MessageReader.readAll(m)
        } catch {
            return sd_bus_error_set(retError, error.name, error.message)
        }
        var cookie: UInt64 = 0
        _ = sd_bus_message_get_cookie(m, &cookie)
        let call = MethodCall(
            sender: sd_bus_message_get_sender(m).map { String(cString: $0) } ?? "",
            cookie: cookie, path: object.path, interface: object.spec.name, member: member, arguments: arguments)
        let id = makeID()
        let gone = CallerGone()
        pending[id] = PendingReply(
            message: sd_bus_message_ref(m), outputSignature: method.output.map(\.signature).joined(),
            sender: call.sender, callerGone: gone)
        watch(call.sender, id, bus: sd_bus_message_get_bus(m))
        incoming.yield(IncomingCall(id: id, call: call, handler: method.handler, callerGone: gone))
        return 1
    }

    /// The call waiting for reply `id`, no longer pending.
    func takePending(_ id: UInt64) -> PendingReply? {
        guard let reply = pending.removeValue(forKey: id) else { return nil }
        unwatch(reply.sender, id)
        return reply
    }

    // MARK: Callers leaving

    private func watch(_ sender: String, _ id: UInt64, bus: OpaquePointer?) {
        // No sender on a direct connection: nobody to watch.
        guard !sender.isEmpty, let bus else { return }
        if let watch = watches[sender] {
            if watch.calls.isEmpty { idleWatches.removeAll { $0 == sender } }
            watch.calls.insert(id)
            return
        }
        let watch = CallerWatch(name: sender, state: self)
        watch.calls.insert(id)
        watches[sender] = watch
        watch.start(on: bus)
    }

    private func unwatch(_ sender: String, _ id: UInt64) {
        guard let watch = watches[sender] else { return }
        watch.calls.remove(id)
        guard watch.calls.isEmpty else { return }
        idleWatches.append(sender)
        if idleWatches.count > Self.maxIdleWatches, let oldest = watches.removeValue(forKey: idleWatches.removeFirst()) {
            finishedWatches.append(oldest)
        }
    }

    /// The caller watched by `watch` left the bus: its calls can no longer be answered, so they
    /// are forgotten (no reply is sent) and their handlers told to stop.
    func callerLeft(_ watch: CallerWatch) {
        guard watches[watch.name] === watch else { return }
        watches.removeValue(forKey: watch.name)
        idleWatches.removeAll { $0 == watch.name }
        finishedWatches.append(watch)
        for id in watch.calls {
            guard let reply = pending.removeValue(forKey: id) else { continue }
            sd_bus_message_unref(reply.message)
            reply.callerGone.fire()
        }
    }

    /// Drops the slots of watches that are done; called outside sd-bus callbacks.
    func buryWatches() {
        for watch in finishedWatches { watch.stop() }
        finishedWatches.removeAll()
    }

    func rememberCall(_ call: PendingCall) { calls[call.id] = call }
    func forgetCall(_ id: UInt64) { calls.removeValue(forKey: id) }
    func call(_ id: UInt64) -> PendingCall? { calls[id] }

    /// On close: forget unanswered incoming calls, fail our outgoing ones, stop the stream of new ones.
    func dropPending() {
        for (_, reply) in pending { sd_bus_message_unref(reply.message) }
        pending.removeAll()
        finishedWatches.append(contentsOf: watches.values)
        watches.removeAll()
        idleWatches.removeAll()
        buryWatches()
        for (_, call) in calls { call.finish(.failure(BusError.failed("the bus connection closed"))) }
        incoming.finish()
    }
}
