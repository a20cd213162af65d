// SPDX-License-Identifier: GPL-2.0-or-later
import CSystemd
import Glibc
import Synchronization

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

/// What a subscription delivers: the signals, in the order the bus sent them, and a marker
/// where some were lost.
public enum SignalEvent: Sendable {
    case signal(BusSignal)
    /// The consumer fell behind by the subscription's buffer limit, so the signals that arrived
    /// meanwhile were dropped, from here until the consumer had taken some again. Whatever the
    /// consumer mirrors from them must be read afresh.
    case overflowed
}

/// The signals of one subscription, as an `AsyncSequence` of `SignalEvent`s. It holds at most its
/// buffer limit of signals the consumer has not taken yet; beyond that, signals are dropped and
/// the consumer gets one `.overflowed` in their place: never a silent gap. It ends when the
/// connection closes; dropping it (or cancelling the task iterating it) removes the match.
public struct SignalSubscription: AsyncSequence, Sendable {
    public typealias Element = SignalEvent
    public typealias Failure = Never

    let events: AsyncStream<SignalEvent>
    let backlog: SignalBacklog

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: events.makeAsyncIterator(), backlog: backlog)
    }

    public struct AsyncIterator: AsyncIteratorProtocol {
        var base: AsyncStream<SignalEvent>.Iterator
        let backlog: SignalBacklog

        public mutating func next() async -> SignalEvent? {
            taken(await base.next())
        }

        public mutating func next(isolation actor: isolated (any Actor)?) async -> SignalEvent? {
            taken(await base.next(isolation: actor))
        }

        private func taken(_ event: SignalEvent?) -> SignalEvent? {
            if case .signal? = event { backlog.count.subtract(1, ordering: .relaxed) }
            return event
        }
    }
}

/// How many signals of a subscription are waiting for its consumer: counted up on the bus
/// thread, down by the consumer.
final class SignalBacklog: Sendable {
    let count = Atomic<Int>(0)
}

/// A live signal match (one or more rules); owned by the connection, confined to the bus thread.
final class Subscription {
    enum Sink {
        /// `signals(_:)`: ends at the first signal that does not fit.
        case plain(AsyncStream<BusSignal>.Continuation)
        /// `subscribe(_:)`: marks the gap and carries on.
        case events(AsyncStream<SignalEvent>.Continuation, SignalBacklog)
    }

    let sink: Sink
    let limit: Int
    var slots: [OpaquePointer] = []
    /// An `.overflowed` is queued and no signal has been queued after it yet.
    private var gapMarked = false
    /// Match rules the bus has not confirmed yet, and who waits for them.
    var unconfirmed = 0
    private var failure: BusError?
    var whenInstalled: CheckedContinuation<Void, any Error>?

    init(_ sink: Sink, limit: Int) {
        self.sink = sink
        self.limit = limit
    }

    func deliver(_ signal: BusSignal) {
        switch sink {
        case .plain(let continuation):
            // The stream buffers `limit` signals; one more ends it, which removes the match.
            if case .dropped = continuation.yield(signal) { continuation.finish() }
        case .events(let continuation, let backlog):
            if backlog.count.load(ordering: .relaxed) >= limit {
                if !gapMarked {
                    gapMarked = true
                    continuation.yield(.overflowed)
                }
            } else {
                gapMarked = false
                backlog.count.add(1, ordering: .relaxed)
                continuation.yield(.signal(signal))
            }
        }
    }

    /// The bus answered one AddMatch.
    func confirmed(_ error: BusError?) {
        unconfirmed -= 1
        if let error { failure = error }
        if unconfirmed == 0 { resumeWaiter() }
    }

    private func resumeWaiter() {
        guard let waiter = whenInstalled else { return }
        whenInstalled = nil
        if let failure { waiter.resume(throwing: failure) } else { waiter.resume() }
    }

    func cancel() {
        for slot in slots { sd_bus_slot_unref(slot) }
        slots.removeAll()
        if failure == nil { failure = BusError.failed("the bus connection closed") }
        resumeWaiter()
        switch sink {
        case .plain(let continuation): continuation.finish()
        case .events(let continuation, _): continuation.finish()
        }
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
    /// in place when this returns (the bus has confirmed it), so whatever happens afterwards, on
    /// any connection, cannot race past it.
    ///
    /// At most `bufferLimit` signals wait for the consumer; if one more arrives, the stream ends
    /// there instead of skipping it (a consumer that must carry on past such a gap uses
    /// `subscribe(_:bufferLimit:)`, which marks it).
    public func signals(
        _ match: SignalMatch, bufferLimit: Int = BusConnection.defaultSignalBufferLimit
    ) async throws -> AsyncStream<BusSignal> {
        let (stream, continuation) = AsyncStream.makeStream(
            of: BusSignal.self, bufferingPolicy: .bufferingOldest(max(1, bufferLimit)))
        let id = try await addSubscription(Subscription(.plain(continuation), limit: max(1, bufferLimit)), [match])
        continuation.onTermination = remover(id)
        return stream
    }

    /// Receives the signals matching any of `matches`, in the order the bus sent them, until the
    /// subscription is dropped or the connection closes. The matches are in place when this
    /// returns. A signal that matches several rules arrives once per rule.
    ///
    /// At most `bufferLimit` signals wait for the consumer. Signals that arrive while it is that
    /// far behind are dropped, and the consumer gets one `.overflowed` where they would have been.
    public func subscribe(
        _ matches: SignalMatch..., bufferLimit: Int = BusConnection.defaultSignalBufferLimit
    ) async throws -> SignalSubscription {
        let (stream, continuation) = AsyncStream.makeStream(of: SignalEvent.self)
        let backlog = SignalBacklog()
        let id = try await addSubscription(Subscription(.events(continuation, backlog), limit: max(1, bufferLimit)), matches)
        continuation.onTermination = remover(id)
        return SignalSubscription(events: stream, backlog: backlog)
    }

    /// Adds the match rules and waits until the bus has confirmed them all; returns the
    /// subscription's id.
    private func addSubscription(_ subscription: Subscription, _ matches: [SignalMatch]) async throws -> UInt64 {
        let bus = try requireBus()
        let id = makeID()
        storeSubscription(subscription, id: id)
        for match in matches {
            var slot: OpaquePointer?
            let r = sd_bus_match_signal_async(
                bus, &slot, match.sender, match.path, match.interface, match.member, signalTrampoline,
                matchInstalledTrampoline, Unmanaged.passUnretained(subscription).toOpaque())
            if r < 0 {
                removeSubscription(id)
                throw BusError.system(r, "adding a signal match")
            }
            if let slot { subscription.slots.append(slot) }
            subscription.unconfirmed += 1
        }
        do {
            // The replies are dispatched on this thread, after this job: none can be missed.
            if subscription.unconfirmed > 0 {
                try await withCheckedThrowingContinuation { subscription.whenInstalled = $0 }
            }
        } catch {
            removeSubscription(id)
            throw error
        }
        return id
    }

    /// Removes subscription `id` when its stream ends; dropping the match must happen on the bus thread.
    private nonisolated func remover<Element>(
        _ id: UInt64
    ) -> @Sendable (AsyncStream<Element>.Continuation.Termination) -> Void {
        let loop = self.loop
        return { [weak self] _ in
            guard let connection = self else { return }
            loop.execute { connection.assumeIsolated { $0.removeSubscription(id) } }
        }
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

private let matchInstalledTrampoline: sd_bus_message_handler_t = { m, userdata, _ in
    guard let userdata else { return 0 }
    let subscription = Unmanaged<Subscription>.fromOpaque(userdata).takeUnretainedValue()
    if let m, sd_bus_message_is_method_error(m, nil) > 0 {
        let e = sd_bus_message_get_error(m)
        let name = e?.pointee.name.map { String(cString: $0) } ?? "org.freedesktop.DBus.Error.Failed"
        subscription.confirmed(BusError(name: name, message: e?.pointee.message.map { String(cString: $0) } ?? ""))
    } else {
        subscription.confirmed(nil)
    }
    return 0
}

private let signalTrampoline: sd_bus_message_handler_t = { m, userdata, _ in
    guard let m, let userdata else { return 0 }
    let subscription = Unmanaged<Subscription>.fromOpaque(userdata).takeUnretainedValue()
    guard let arguments = try? MessageReader.readAll(m) else { return 0 }
    func text(_ p: UnsafePointer<CChar>?) -> String { p.map { String(cString: $0) } ?? "" }
    subscription.deliver(
        BusSignal(
            sender: text(sd_bus_message_get_sender(m)), path: text(sd_bus_message_get_path(m)),
            interface: text(sd_bus_message_get_interface(m)), member: text(sd_bus_message_get_member(m)),
            arguments: arguments))
    return 0
}
