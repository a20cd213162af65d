// SPDX-License-Identifier: GPL-2.0-or-later
import CSystemd
import Glibc

/// A signal received from the bus.
public struct BusSignal: Sendable {
    public var sender: String
    public var path: String
    public var interface: String
    public var member: String
    public var arguments: [DBusValue]
}

/// Which signals to receive; nil fields match anything.
public struct SignalMatch: Sendable {
    public var sender: String?
    public var path: String?
    public var interface: String?
    public var member: String?
    public init(sender: String? = nil, path: String? = nil, interface: String? = nil, member: String? = nil) {
        self.sender = sender
        self.path = path
        self.interface = interface
        self.member = member
    }
}

/// An outgoing call waiting for its reply: reached from the reply callback through userdata, and
/// from cancellation and close through `BusState`. Confined to the bus thread; resumed exactly once.
final class PendingCall {
    let id: UInt64
    unowned let state: BusState
    var slot: OpaquePointer?
    private var continuation: CheckedContinuation<[DBusValue], any Error>?

    init(id: UInt64, state: BusState, continuation: CheckedContinuation<[DBusValue], any Error>) {
        self.id = id
        self.state = state
        self.continuation = continuation
    }

    /// Resumes the caller (once) and forgets the call; dropping the slot cancels it in sd-bus.
    func finish(_ result: Result<[DBusValue], any Error>) {
        guard let continuation else { return }
        self.continuation = nil
        state.forgetCall(id)
        let slot = self.slot
        self.slot = nil
        sd_bus_slot_unref(slot)
        continuation.resume(with: result)
    }
}

/// A live signal match; owned by the connection, confined to the bus thread.
final class Subscription {
    let continuation: AsyncStream<BusSignal>.Continuation
    var slot: OpaquePointer?
    init(_ continuation: AsyncStream<BusSignal>.Continuation) { self.continuation = continuation }
    func cancel() {
        sd_bus_slot_unref(slot)
        slot = nil
        continuation.finish()
    }
}

extension BusConnection {
    /// Calls a method on another service and waits for its reply. `sent` runs once the call is on
    /// its way, with its serial, before any reply or signal that follows it is dispatched.
    public func call(
        _ destination: String, path: String, interface: String, member: String,
        _ arguments: [DBusValue] = [], timeoutSeconds: Double = 25,
        sent: @Sendable (UInt64) -> Void = { _ in }
    ) async throws -> [DBusValue] {
        let bus = try requireBus()
        var m: OpaquePointer?
        var r = sd_bus_message_new_method_call(bus, &m, destination, path, interface, member)
        guard r >= 0, let m else { throw BusError.system(r, "new method call \(member)") }
        defer { sd_bus_message_unref(m) }
        try MessageWriter.append(arguments, to: m)
        let usec = UInt64(max(0, timeoutSeconds) * 1_000_000)
        let id = makeID()
        let loop = self.loop
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let pending = PendingCall(id: id, state: state, continuation: continuation)
                var slot: OpaquePointer?
                r = sd_bus_call_async(bus, &slot, m, replyTrampoline, Unmanaged.passUnretained(pending).toOpaque(), usec)
                if r < 0 {
                    pending.finish(.failure(BusError.system(r, "calling \(interface).\(member)")))
                    return
                }
                pending.slot = slot
                state.rememberCall(pending)
                var cookie: UInt64 = 0
                _ = sd_bus_message_get_cookie(m, &cookie)
                sent(cookie)
            }
        } onCancel: { [weak self] in
            guard let connection = self else { return }
            loop.execute { connection.assumeIsolated { $0.state.call(id)?.finish(.failure(CancellationError())) } }
        }
    }

    /// Receives matching signals until the stream is dropped or the connection closes. The match is
    /// in place when this returns, so a call made afterwards cannot race past it.
    public func signals(_ match: SignalMatch) throws(BusError) -> AsyncStream<BusSignal> {
        let bus = try requireBus()
        let (stream, continuation) = AsyncStream.makeStream(of: BusSignal.self)
        let subscription = Subscription(continuation)
        let id = makeID()
        var slot: OpaquePointer?
        let r = sd_bus_match_signal_async(
            bus, &slot, match.sender, match.path, match.interface, match.member, signalTrampoline, nil,
            Unmanaged.passUnretained(subscription).toOpaque())
        if r < 0 { throw BusError.system(r, "adding a signal match") }
        subscription.slot = slot
        storeSubscription(subscription, id: id)
        let loop = self.loop
        continuation.onTermination = { [weak self] _ in
            guard let connection = self else { return }
            // Dropping the match must happen on the bus thread.
            loop.execute { connection.assumeIsolated { $0.removeSubscription(id) } }
        }
        return stream
    }
}

private let replyTrampoline: sd_bus_message_handler_t = { m, userdata, _ in
    guard let userdata else { return 0 }
    let pending = Unmanaged<PendingCall>.fromOpaque(userdata).takeUnretainedValue()
    guard let m else {
        pending.finish(.failure(BusError.failed("no reply")))
        return 0
    }
    if sd_bus_message_is_method_error(m, nil) > 0 {
        let e = sd_bus_message_get_error(m)
        let name = e?.pointee.name.map { String(cString: $0) } ?? "org.freedesktop.DBus.Error.Failed"
        let message = e?.pointee.message.map { String(cString: $0) } ?? ""
        pending.finish(.failure(BusError(name: name, message: message)))
        return 0
    }
    do {
        pending.finish(.success(try MessageReader.readAll(m)))
    } catch {
        pending.finish(.failure(error))
    }
    return 0
}

private let signalTrampoline: sd_bus_message_handler_t = { m, userdata, _ in
    guard let m, let userdata else { return 0 }
    let subscription = Unmanaged<Subscription>.fromOpaque(userdata).takeUnretainedValue()
    guard let arguments = try? MessageReader.readAll(m) else { return 0 }
    func text(_ p: UnsafePointer<CChar>?) -> String { p.map { String(cString: $0) } ?? "" }
    subscription.continuation.yield(
        BusSignal(
            sender: text(sd_bus_message_get_sender(m)), path: text(sd_bus_message_get_path(m)),
            interface: text(sd_bus_message_get_interface(m)), member: text(sd_bus_message_get_member(m)),
            arguments: arguments))
    return 0
}
