// SPDX-License-Identifier: GPL-2.0-or-later
import CSystemd
import Glibc

/// Which bus to connect to.
public enum BusAddress: Sendable, Equatable {
    case system
    case session
    case address(String)
}

/// One sd-bus connection, isolated to its own `BusLoop` thread. Exported objects, outgoing calls
/// and signal subscriptions all go through it.
public actor BusConnection {
    nonisolated let loop: BusLoop
    public nonisolated var unownedExecutor: UnownedSerialExecutor { loop.asUnownedSerialExecutor() }

    private var bus: OpaquePointer?
    private var objects: [String: ExportedObject] = [:]
    private var managerSlots: [OpaquePointer] = []
    private var subscriptions: [UInt64: Subscription] = [:]
    /// A monitor connection's message sinks (`BusConnection+Monitor`), ended with the connection.
    var monitorSinks: [MonitorSink] = []
    let state: BusState
    /// Calls held for authorization (`gate(_:check:)`).
    var gate: AuthorizationGate?
    private nonisolated let incomingCalls: AsyncStream<BusState.IncomingCall>

    /// How many incoming method calls may wait for their reply at once, by default.
    public static let defaultMaxPendingCalls = 1024
    /// How many signals a subscription buffers for a consumer that has not taken them yet, by default.
    public static let defaultSignalBufferLimit = 4096

    private init(loop: BusLoop, maxPendingCalls: Int) {
        self.loop = loop
        // Bounded by `maxPendingCalls`: every queued call is also a pending one.
        let (stream, continuation) = AsyncStream.makeStream(of: BusState.IncomingCall.self)
        incomingCalls = stream
        state = BusState(incoming: continuation, maxPendingCalls: maxPendingCalls)
    }

    /// Opens a connection on a new bus thread. At most `maxPendingCalls` incoming method calls
    /// wait for their reply at once (queued for `serve()` or being handled); further calls are
    /// answered at once with `org.freedesktop.DBus.Error.LimitsExceeded`.
    /// With `allowInteractiveAuthorization`, the calls it makes let the service ask polkit to
    /// authenticate the user (a password dialog or agent prompt) instead of refusing at once.
    public static func open(
        _ address: BusAddress, threadName: String = "sd-bus", maxPendingCalls: Int = defaultMaxPendingCalls,
        allowInteractiveAuthorization: Bool = false
    ) async throws -> BusConnection {
        try await open(
            address, threadName: threadName, maxPendingCalls: maxPendingCalls,
            allowInteractiveAuthorization: allowInteractiveAuthorization, monitor: false)
    }

    /// `open`, and with `monitor` sd-bus's monitor mode (set before the connection starts), for
    /// `BusConnection.monitor`.
    static func open(
        _ address: BusAddress, threadName: String, maxPendingCalls: Int, allowInteractiveAuthorization: Bool, monitor: Bool
    ) async throws -> BusConnection {
        let connection = BusConnection(loop: try BusLoop(), maxPendingCalls: max(1, maxPendingCalls))
        // Weakly: a connection released without close() is closed by its deinit, and its thread ends.
        try connection.loop.start(name: threadName) { [weak connection] in connection?.assumeIsolated { $0.step() } }
        do {
            try await connection.connect(address, allowInteractiveAuthorization: allowInteractiveAuthorization, monitor: monitor)
        } catch {
            await connection.close()
            throw error
        }
        return connection
    }

    private func connect(_ address: BusAddress, allowInteractiveAuthorization: Bool, monitor: Bool) throws(BusError) {
        var bus: OpaquePointer?
        var r = sd_bus_new(&bus)
        guard r >= 0, let bus else { throw BusError.system(r, "sd_bus_new") }
        switch address {
        case .system:
            let env = getenv("DBUS_SYSTEM_BUS_ADDRESS").map { String(cString: $0) }
            r = sd_bus_set_address(bus, env ?? "unix:path=/run/dbus/system_bus_socket")
        case .session:
            guard let env = getenv("DBUS_SESSION_BUS_ADDRESS") else {
                sd_bus_unref(bus)
                throw BusError.failed("DBUS_SESSION_BUS_ADDRESS is not set")
            }
            r = sd_bus_set_address(bus, env)
        case .address(let a):
            r = sd_bus_set_address(bus, a)
        }
        if r >= 0 { r = sd_bus_set_bus_client(bus, 1) }
        if r >= 0 { r = sd_bus_negotiate_fds(bus, 1) }
        if r >= 0 && allowInteractiveAuthorization { r = sd_bus_set_allow_interactive_authorization(bus, 1) }
        if r >= 0 && monitor { r = sd_bus_set_monitor(bus, 1) }
        if r >= 0 { r = sd_bus_start(bus) }
        if r < 0 {
            sd_bus_unref(bus)
            throw BusError.system(r, "connecting to the \(address) bus")
        }
        self.bus = bus
    }

    /// One round of I/O on the bus thread: dispatch everything pending, then say what to wait for.
    fileprivate func step() -> BusLoop.PollRequest? {
        guard let bus else { return nil }
        while true {
            let r = sd_bus_process(bus, nil)
            if r <= 0 { break }
        }
        state.buryWatches()
        guard sd_bus_is_open(bus) > 0 else {
            shutDown()
            return nil
        }
        let fd = sd_bus_get_fd(bus)
        let events = sd_bus_get_events(bus)
        var until: UInt64 = 0
        var timeout: Int32 = -1
        if sd_bus_get_timeout(bus, &until) >= 0 && until != UInt64.max {
            var now = timespec()
            clock_gettime(CLOCK_MONOTONIC, &now)
            let nowUS = UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec) / 1000
            timeout = until <= nowUS ? 0 : Int32(clamping: (until - nowUS + 999) / 1000)
        }
        guard fd >= 0, events >= 0 else { return nil }
        return BusLoop.PollRequest(fd: fd, events: Int16(events), timeoutMS: timeout)
    }

    /// Whether the connection is still up.
    public var isOpen: Bool { bus.map { sd_bus_is_open($0) > 0 } ?? false }

    /// The unique name (":1.42") the bus gave this connection.
    public func uniqueName() throws(BusError) -> String {
        guard let bus else { throw BusError.failed("bus closed") }
        var name: UnsafePointer<CChar>?
        let r = sd_bus_get_unique_name(bus, &name)
        guard r >= 0, let name else { throw BusError.system(r, "sd_bus_get_unique_name") }
        return String(cString: name)
    }

    /// Flushes and closes the connection: in-flight calls fail, method calls stop arriving,
    /// subscriptions end. Returns once the bus thread has run what was queued and exited, its
    /// descriptors closed. A connection released without it is closed when it goes.
    ///
    /// The actor stays usable afterwards (it says the connection is closed); work sent to it then
    /// runs on a short-lived thread (see `BusLoop`).
    public nonisolated func close() async {
        await shutDown()
        await loop.exited.wait()
        loop.join()
    }

    /// A connection released without `close()`: closed on its thread, which then exits and, with
    /// nobody left to join it, frees itself.
    isolated deinit {
        shutDown()
        loop.detach()
    }

    /// Closes the connection and tells the bus thread to exit once its queue is empty.
    private func shutDown() {
        loop.stop()
        guard let bus else { return }
        for slot in managerSlots { sd_bus_slot_unref(slot) }
        managerSlots.removeAll()
        objects.removeAll()
        for (_, subscription) in subscriptions { subscription.cancel() }
        subscriptions.removeAll()
        for sink in monitorSinks { sink.end() }
        monitorSinks.removeAll()
        state.dropPending()
        gate?.release()
        gate = nil
        sd_bus_flush(bus)
        sd_bus_close(bus)
        sd_bus_unref(bus)
        self.bus = nil
    }

    func requireBus() throws(BusError) -> OpaquePointer {
        guard let bus else { throw BusError.failed("the bus connection is closed") }
        return bus
    }

    func storeSubscription(_ subscription: Subscription, id: UInt64) {
        subscriptions[id] = subscription
    }

    func removeSubscription(_ id: UInt64) {
        subscriptions.removeValue(forKey: id)?.cancel()
    }

    func makeID() -> UInt64 { state.makeID() }

    // MARK: Names and objects

    public func requestName(_ name: String) throws(BusError) {
        let bus = try requireBus()
        let r = sd_bus_request_name(bus, name, 0)
        if r == -EEXIST || r == -EALREADY {
            throw BusError(name: "org.freedesktop.DBus.Error.AddressInUse", message: "\(name) is already owned")
        }
        if r < 0 { throw BusError.system(r, "requesting \(name)") }
    }

    public func releaseName(_ name: String) {
        guard let bus else { return }
        _ = sd_bus_release_name(bus, name)
    }

    /// Serves org.freedesktop.DBus.ObjectManager at `path` for everything exported below it.
    public func addObjectManager(at path: String) throws(BusError) {
        let bus = try requireBus()
        var slot: OpaquePointer?
        let r = sd_bus_add_object_manager(bus, &slot, path)
        if r < 0 { throw BusError.system(r, "adding an object manager at \(path)") }
        if let slot { managerSlots.append(slot) }
    }

    /// Exports an interface at `path`; with `announce`, emits InterfacesAdded for it.
    public func export(_ spec: InterfaceSpec, at path: String, announce: Bool = false) throws(BusError) {
        let bus = try requireBus()
        let key = path + "\0" + spec.name
        guard objects[key] == nil else { throw BusError.failed("\(spec.name) already exported at \(path)") }
        let object = ExportedObject(path: path, spec: spec, state: state)
        var slot: OpaquePointer?
        let r = sd_bus_add_object_vtable(
            bus, &slot, path, spec.name, object.vtable, Unmanaged.passUnretained(object).toOpaque())
        if r < 0 { throw BusError.system(r, "exporting \(spec.name) at \(path)") }
        object.slot = slot
        objects[key] = object
        if announce {
            let names: [String] = [spec.name]
            try withStrv(names) { strv throws(BusError) in
                let r = sd_bus_emit_interfaces_added_strv(bus, path, strv)
                if r < 0 { throw BusError.system(r, "InterfacesAdded for \(path)") }
            }
        }
    }

    /// Removes an exported interface (its slot goes with it); with `announce`, emits InterfacesRemoved first.
    public func unexport(interface: String, at path: String, announce: Bool = false) {
        guard let bus, objects[path + "\0" + interface] != nil else { return }
        if announce { _ = try? withStrv([interface]) { strv in sd_bus_emit_interfaces_removed_strv(bus, path, strv) } }
        objects.removeValue(forKey: path + "\0" + interface)
    }

    /// Sets a property's value and, if it changed and the property emits changes, sends PropertiesChanged.
    public func setProperty(_ name: String, to value: DBusValue, interface: String, at path: String) throws(BusError) {
        let bus = try requireBus()
        guard let object = objects[path + "\0" + interface], let spec = object.property(named: name) else {
            throw BusError.failed("no property \(interface).\(name) at \(path)")
        }
        guard value.signature == spec.signature else {
            throw BusError.failed("\(name) has type \(spec.signature), not \(value.signature)")
        }
        guard object.values[name] != value else { return }
        object.values[name] = value
        guard spec.change != .constant else { return }
        try withStrv([name]) { strv throws(BusError) in
            let r = sd_bus_emit_properties_changed_strv(bus, path, interface, strv)
            if r < 0 { throw BusError.system(r, "PropertiesChanged \(name)") }
        }
    }

    /// The current value of one of this connection's exported properties.
    public func property(_ name: String, interface: String, at path: String) -> DBusValue? {
        objects[path + "\0" + interface]?.values[name]
    }

    /// Emits a signal from an exported path.
    public func emit(
        _ member: String, interface: String, at path: String, _ arguments: [DBusValue]
    ) throws(BusError) {
        let bus = try requireBus()
        var m: OpaquePointer?
        var r = sd_bus_message_new_signal(bus, &m, path, interface, member)
        guard r >= 0, let m else { throw BusError.system(r, "new signal \(member)") }
        defer { sd_bus_message_unref(m) }
        try MessageWriter.append(arguments, to: m)
        r = sd_bus_send(bus, m, nil)
        if r < 0 { throw BusError.system(r, "sending \(member)") }
    }

    /// Queues `body` for the bus thread and returns at once, in order with posted signals: a
    /// property set this way and a signal posted after it reach clients in that order.
    public nonisolated func post(_ body: @escaping @Sendable (isolated BusConnection) -> Void) {
        loop.execute { [self] in
            assumeIsolated { connection in body(connection) }
        }
    }

    /// Queues a signal for the bus thread and returns at once, without waiting for it to be sent:
    /// a producer of many signals (an answer's deltas) does not pay two thread hops for each.
    /// The bus thread keeps order: signals posted before a method's reply is sent go out before
    /// it, and before anything else queued later. `failed` runs on the bus thread if it cannot be sent.
    public nonisolated func post(
        _ member: String, interface: String, at path: String, _ arguments: [DBusValue],
        failed: @escaping @Sendable (BusError) -> Void = { _ in }
    ) {
        loop.execute { [self] in
            assumeIsolated { connection in
                do throws(BusError) {
                    try connection.emit(member, interface: interface, at: path, arguments)
                } catch {
                    failed(error)
                }
            }
        }
    }

    // MARK: Incoming method calls

    /// Runs method handlers, each in its own child task, until the connection closes (then the
    /// handlers still running are cancelled: their replies could not be sent). A slow handler
    /// never holds up the bus: introspection and property reads are answered meanwhile.
    ///
    /// A handler is also cancelled when its caller leaves the bus (its unique name loses its
    /// owner) before the reply is sent; whatever it returns or throws then is dropped.
    public nonisolated func serve() async {
        await withDiscardingTaskGroup { group in
            for await incoming in incomingCalls {
                group.addTask {
                    await withTaskGroup(of: Void.self) { call in
                        call.addTask { await self.handle(incoming) }
                        call.addTask { await incoming.callerGone.wait() }
                        // Whichever ends first (the handler, or the caller) ends the other.
                        await call.next()
                        call.cancelAll()
                    }
                }
            }
            group.cancelAll()
        }
    }

    private nonisolated func handle(_ incoming: BusState.IncomingCall) async {
        let result: Result<[DBusValue], BusError>
        do {
            result = .success(try await incoming.handler(incoming.call))
        } catch let error as BusError {
            result = .failure(error)
        } catch {
            result = .failure(BusError.failed(String(describing: error)))
        }
        await reply(to: incoming.id, with: result)
    }

    private func reply(to id: UInt64, with result: Result<[DBusValue], BusError>) {
        // Descriptors handed over in the result are copied into the reply (or not sent at all).
        defer { if case .success(let values) = result { for fd in values.flatMap(\.descriptors) { Glibc.close(fd) } } }
        guard let pending = state.takePending(id) else { return }
        defer { sd_bus_message_unref(pending.message) }
        switch result {
        case .success(let values):
            var reply: OpaquePointer?
            guard sd_bus_message_new_method_return(pending.message, &reply) >= 0, let reply else { return }
            defer { sd_bus_message_unref(reply) }
            do throws(BusError) {
                guard values.map(\.signature).joined() == pending.outputSignature else {
                    throw BusError.failed("internal error: reply type mismatch")
                }
                try MessageWriter.append(values, to: reply)
                let r = sd_bus_send(nil, reply, nil)
                // Too big for the bus, say: the caller gets an error instead of a timeout.
                if r < 0 { throw BusError.system(r, "sending the reply") }
            } catch {
                DBusKit.replyError(pending.message, error)
            }
        case .failure(let error):
            DBusKit.replyError(pending.message, error)
        }
    }

}

/// Calls `body` with a NULL-terminated C string array of `strings`.
func withStrv<T>(_ strings: [String], _ body: (UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) throws(BusError) -> T) throws(BusError) -> T {
    var copies: [UnsafeMutablePointer<CChar>?] = strings.map { strdup($0) }
    copies.append(nil)
    defer { for p in copies { free(p) } }
    return try copies.withUnsafeMutableBufferPointer { buffer throws(BusError) in try body(buffer.baseAddress!) }
}
