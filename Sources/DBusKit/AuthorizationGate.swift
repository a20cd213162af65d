// SPDX-License-Identifier: GPL-2.0-or-later
import CSystemd
import Glibc

/// A call that needs an action authorized: a method, or a property written through
/// org.freedesktop.DBus.Properties.Set.
public struct GatedCall: Sendable, Hashable {
    public var interface: String
    /// The method's name, or the property's for a write.
    public var member: String
    public var isPropertyWrite: Bool

    public static func method(_ interface: String, _ member: String) -> GatedCall {
        GatedCall(interface: interface, member: member, isPropertyWrite: false)
    }

    public static func propertyWrite(_ interface: String, _ property: String) -> GatedCall {
        GatedCall(interface: interface, member: property, isPropertyWrite: true)
    }
}

/// Who asks for which action.
public struct AuthorizationRequest: Sendable {
    public var sender: String
    public var action: String
    public var call: GatedCall
    /// The caller's message allows interactive authorization (an authentication dialog).
    public var interactive: Bool

    public init(sender: String, action: String, call: GatedCall, interactive: Bool) {
        self.sender = sender
        self.action = action
        self.call = call
        self.interactive = interactive
    }
}

/// What the gate's check decided; a refusal is the caller's error reply.
public enum AuthorizationDecision: Sendable {
    case allowed
    case refused(BusError)
}

/// The calls a connection lets through only after an asynchronous check, and the messages it
/// holds meanwhile. Confined to the bus thread.
final class AuthorizationGate {
    let actions: [GatedCall: String]
    let check: @Sendable (AuthorizationRequest) async -> AuthorizationDecision
    /// Held calls are bounded like pending replies: each one is a task and a message.
    let limit: Int
    var slot: OpaquePointer?
    /// Calls waiting for their check, by id (only the id leaves the bus thread).
    var held: [UInt64: (message: OpaquePointer, key: Key)] = [:]
    /// Calls allowed and put back in the read queue: let through once when they come again.
    var approved: Set<Key> = []
    private var nextID: UInt64 = 1
    weak var connection: BusConnection?

    struct Key: Hashable {
        var sender: String
        var cookie: UInt64
    }

    init(actions: [GatedCall: String], limit: Int, check: @escaping @Sendable (AuthorizationRequest) async -> AuthorizationDecision) {
        self.actions = actions
        self.limit = limit
        self.check = check
    }

    /// The filter's verdict on `m`: 0 lets it go on to its object, 1 holds it (answered later).
    func filter(_ m: OpaquePointer) -> Int32 {
        var type: UInt8 = 0
        guard sd_bus_message_get_type(m, &type) >= 0, type == UInt8(SD_BUS_MESSAGE_METHOD_CALL),
            let interface = sd_bus_message_get_interface(m).map({ String(cString: $0) }),
            let member = sd_bus_message_get_member(m).map({ String(cString: $0) })
        else { return 0 }
        let call: GatedCall
        if interface == "org.freedesktop.DBus.Properties" && member == "Set" {
            guard let written = Self.writtenProperty(m) else { return 0 }  // malformed: sd-bus answers it
            call = .propertyWrite(written.interface, written.property)
        } else {
            call = .method(interface, member)
        }
        guard let action = actions[call] else { return 0 }
        let sender = sd_bus_message_get_sender(m).map { String(cString: $0) } ?? ""
        var cookie: UInt64 = 0
        _ = sd_bus_message_get_cookie(m, &cookie)
        let key = Key(sender: sender, cookie: cookie)
        if approved.remove(key) != nil { return 0 }
        guard held.count < limit, let connection else {
            replyError(m, BusError(name: "org.freedesktop.DBus.Error.LimitsExceeded", message: "Too many calls wait for authorization."))
            return 1
        }
        let id = nextID
        nextID += 1
        held[id] = (sd_bus_message_ref(m), key)
        let request = AuthorizationRequest(
            sender: sender, action: action, call: call, interactive: sd_bus_message_get_allow_interactive_authorization(m) > 0)
        let check = self.check
        Task {
            let decision = await check(request)
            connection.post { connection in connection.decided(id, decision) }
        }
        return 1
    }

    /// Properties.Set's first two arguments, read and then rewound so the call dispatches whole.
    private static func writtenProperty(_ m: OpaquePointer) -> (interface: String, property: String)? {
        defer { _ = sd_bus_message_rewind(m, 1) }
        var interface: UnsafePointer<CChar>?
        var property: UnsafePointer<CChar>?
        guard sd_bus_message_read_basic(m, CChar(UInt8(ascii: "s")), &interface) > 0,
            sd_bus_message_read_basic(m, CChar(UInt8(ascii: "s")), &property) > 0,
            let interface, let property
        else { return nil }
        return (String(cString: interface), String(cString: property))
    }

    /// Drops every held call unanswered (the connection closes).
    func release() {
        for (_, entry) in held { sd_bus_message_unref(entry.message) }
        held.removeAll()
        if let slot { sd_bus_slot_unref(slot) }
        slot = nil
    }
}

func replyError(_ message: OpaquePointer, _ error: BusError) {
    var e = sd_bus_error()
    _ = sd_bus_error_set(&e, error.name, error.message)
    _ = sd_bus_reply_method_error(message, &e)
    sd_bus_error_free(&e)
}

extension BusConnection {
    /// Lets the calls named in `actions` (methods, or property writes) through only once
    /// `check` allows the action for the caller; meanwhile the call is held, not answered, and
    /// every other call is served as usual. A refusal is the caller's error reply. An allowed
    /// call is put back in the read queue and dispatched as if it had just arrived (sd-bus's
    /// own way, as systemd's services do for polkit). Install before exporting objects.
    public func gate(_ actions: [GatedCall: String], check: @escaping @Sendable (AuthorizationRequest) async -> AuthorizationDecision)
        throws(BusError)
    {
        let bus = try requireBus()
        let gate = AuthorizationGate(actions: actions, limit: state.maxPendingCalls, check: check)
        gate.connection = self
        var slot: OpaquePointer?
        let r = sd_bus_add_filter(bus, &slot, gateFilter, Unmanaged.passUnretained(gate).toOpaque())
        guard r >= 0 else { throw BusError.system(r, "adding the authorization filter") }
        gate.slot = slot
        self.gate?.release()
        self.gate = gate
    }

    /// The check's answer for a held call, on the bus thread.
    func decided(_ id: UInt64, _ decision: AuthorizationDecision) {
        guard let gate, let entry = gate.held.removeValue(forKey: id) else { return }
        defer { sd_bus_message_unref(entry.message) }
        guard let bus = try? requireBus() else { return }
        switch decision {
        case .allowed:
            gate.approved.insert(entry.key)
            if sd_bus_enqueue_for_read(bus, entry.message) < 0 {
                gate.approved.remove(entry.key)
                replyError(entry.message, BusError.failed("The call could not be dispatched after its authorization."))
            }
        case .refused(let error):
            replyError(entry.message, error)
        }
    }
}

private let gateFilter: sd_bus_message_handler_t = { m, userdata, _ in
    guard let m, let userdata else { return 0 }
    return Unmanaged<AuthorizationGate>.fromOpaque(userdata).takeUnretainedValue().filter(m)
}
