// SPDX-License-Identifier: GPL-2.0-or-later
import CSystemd

/// The part of a connection's state that C callbacks reach directly: method calls waiting for
/// their reply. Owned by `BusConnection` and confined, like it, to the bus thread.
final class BusState {
    struct PendingReply {
        var message: OpaquePointer
        var outputSignature: String
    }

    struct IncomingCall: Sendable {
        var id: UInt64
        var call: MethodCall
        var handler: @Sendable (MethodCall) async throws -> [DBusValue]
    }

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
        pending[id] = PendingReply(
            message: sd_bus_message_ref(m), outputSignature: method.output.map(\.signature).joined())
        incoming.yield(IncomingCall(id: id, call: call, handler: method.handler))
        return 1
    }

    func takePending(_ id: UInt64) -> PendingReply? {
        pending.removeValue(forKey: id)
    }

    func rememberCall(_ call: PendingCall) { calls[call.id] = call }
    func forgetCall(_ id: UInt64) { calls.removeValue(forKey: id) }
    func call(_ id: UInt64) -> PendingCall? { calls[id] }

    /// On close: forget unanswered incoming calls, fail our outgoing ones, stop the stream of new ones.
    func dropPending() {
        for (_, reply) in pending { sd_bus_message_unref(reply.message) }
        pending.removeAll()
        for (_, call) in calls { call.finish(.failure(BusError.failed("the bus connection closed"))) }
        incoming.finish()
    }
}
