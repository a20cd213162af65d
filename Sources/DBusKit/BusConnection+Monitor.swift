// SPDX-License-Identifier: GPL-2.0-or-later
import CSystemd
import Glibc

/// A message a monitor connection saw on the bus, whoever it was between.
public struct MonitoredMessage: Sendable {
    public enum Kind: Sendable, Equatable {
        case methodCall, methodReturn, error, signal
    }

    public var kind: Kind
    /// The sender's serial of this message.
    public var serial: UInt64
    /// For a method return or error: the serial of the call it answers; else 0.
    public var replySerial: UInt64
    public var sender: String
    /// As the sender addressed it (a well-known name, a unique name); "" for a broadcast signal.
    public var destination: String
    public var path: String
    public var interface: String
    public var member: String
    /// For an error: its name.
    public var errorName: String
    /// The body; empty if it could not be read. Descriptors are not carried (closed at once).
    public var arguments: [DBusValue]
}

/// The filter of a monitor connection: every message the bus copies to it, into one stream.
/// Confined to the bus thread.
final class MonitorSink {
    private let continuation: AsyncStream<MonitoredMessage>.Continuation
    /// The connection's own unique name: what is addressed to it (the answer to BecomeMonitor,
    /// the bus's NameLost) is not overheard.
    let ownName: String
    var slot: OpaquePointer?

    init(_ continuation: AsyncStream<MonitoredMessage>.Continuation, ownName: String) {
        self.continuation = continuation
        self.ownName = ownName
    }

    func deliver(_ message: MonitoredMessage) {
        continuation.yield(message)
    }

    /// The connection closed: the stream ends.
    func end() {
        sd_bus_slot_unref(slot)
        slot = nil
        continuation.finish()
    }
}

extension BusConnection {
    /// Opens a connection to `address` and makes it a monitor (org.freedesktop.DBus.Monitoring's
    /// BecomeMonitor with `rules`, sd-bus in its monitor mode): it receives a copy of every message
    /// on the bus that matches a rule, whoever sent it to whomever, and can send nothing more.
    /// The bus allows it to root and, on a session bus, to the bus's own user.
    ///
    /// The stream holds at most `bufferLimit` messages the consumer has not taken; later ones are
    /// dropped until it catches up. It ends when the connection closes (the bus went away too).
    public static func monitor(
        _ address: BusAddress, rules: [String], bufferLimit: Int = defaultSignalBufferLimit, threadName: String = "sd-bus-monitor"
    ) async throws -> (BusConnection, AsyncStream<MonitoredMessage>) {
        let connection = try await open(
            address, threadName: threadName, maxPendingCalls: 1, allowInteractiveAuthorization: false, monitor: true)
        let (stream, continuation) = AsyncStream.makeStream(
            of: MonitoredMessage.self, bufferingPolicy: .bufferingOldest(max(1, bufferLimit)))
        do {
            try await connection.addMonitorSink(MonitorSink(continuation, ownName: try await connection.uniqueName()))
            // Its reply comes to this connection's own name, so sd-bus still dispatches it.
            _ = try await connection.call(
                "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus.Monitoring",
                member: "BecomeMonitor", [.array(element: "s", rules.map(DBusValue.string)), .uint32(0)])
        } catch {
            await connection.close()
            throw error
        }
        return (connection, stream)
    }

    private func addMonitorSink(_ sink: MonitorSink) throws(BusError) {
        let bus = try requireBus()
        var slot: OpaquePointer?
        let r = sd_bus_add_filter(bus, &slot, monitorTrampoline, Unmanaged.passUnretained(sink).toOpaque())
        if r < 0 { throw BusError.system(r, "adding the monitor's filter") }
        sink.slot = slot
        monitorSinks.append(sink)
    }
}

/// Every message reaches it (returning 1 ends its dispatch there: a monitor never answers a call
/// it overhears, which the bus would punish by disconnecting it). A reply to this connection's
/// own calls has been dispatched to its caller before filters run.
private let monitorTrampoline: sd_bus_message_handler_t = { m, userdata, _ in
    guard let m, let userdata else { return 1 }
    let sink = Unmanaged<MonitorSink>.fromOpaque(userdata).takeUnretainedValue()
    var type: UInt8 = 0
    guard sd_bus_message_get_type(m, &type) >= 0 else { return 1 }
    let kind: MonitoredMessage.Kind
    switch Int(type) {
    case Int(SD_BUS_MESSAGE_METHOD_CALL): kind = .methodCall
    case Int(SD_BUS_MESSAGE_METHOD_RETURN): kind = .methodReturn
    case Int(SD_BUS_MESSAGE_METHOD_ERROR): kind = .error
    case Int(SD_BUS_MESSAGE_SIGNAL): kind = .signal
    default: return 1
    }
    var serial: UInt64 = 0
    _ = sd_bus_message_get_cookie(m, &serial)
    var replySerial: UInt64 = 0
    if kind == .methodReturn || kind == .error { _ = sd_bus_message_get_reply_cookie(m, &replySerial) }
    func text(_ p: UnsafePointer<CChar>?) -> String { p.map { String(cString: $0) } ?? "" }
    let destination = text(sd_bus_message_get_destination(m))
    guard destination != sink.ownName else { return 1 }
    let arguments = (try? MessageReader.readAll(m)) ?? []
    for fd in arguments.flatMap(\.descriptors) { close(fd) }
    sink.deliver(
        MonitoredMessage(
            kind: kind, serial: serial, replySerial: replySerial, sender: text(sd_bus_message_get_sender(m)),
            destination: destination, path: text(sd_bus_message_get_path(m)),
            interface: text(sd_bus_message_get_interface(m)), member: text(sd_bus_message_get_member(m)),
            errorName: kind == .error ? text(sd_bus_message_get_error(m)?.pointee.name) : "", arguments: arguments))
    return 1
}
