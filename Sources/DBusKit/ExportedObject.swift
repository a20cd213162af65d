// SPDX-License-Identifier: GPL-2.0-or-later
import CSystemd
import Glibc

/// One interface exported at one path: its vtable (with the C strings sd-bus keeps pointers to),
/// its current property values, and its slot. Confined to the bus thread.
final class ExportedObject {
    let path: String
    let spec: InterfaceSpec
    let state: BusState
    var values: [String: DBusValue]
    var slot: OpaquePointer?
    private(set) var vtable: UnsafeMutablePointer<sd_bus_vtable>
    private var strings: [UnsafeMutablePointer<CChar>] = []

    init(path: String, spec: InterfaceSpec, state: BusState) {
        self.path = path
        self.spec = spec
        self.state = state
        self.values = Dictionary(uniqueKeysWithValues: spec.properties.map { ($0.name, $0.initial) })
        let count = 2 + spec.methods.count + spec.properties.count + spec.signals.count
        vtable = .allocate(capacity: count)
        var entries: [sd_bus_vtable] = [csd_vtable_start(0)]
        for method in spec.methods {
            let names = (method.input + method.output).map(\.name).joined(separator: "\0") + "\0"
            entries.append(
                csd_vtable_method(
                    keep(method.name), keep(method.input.map(\.signature).joined()),
                    keep(method.output.map(\.signature).joined()), keep(names), methodTrampoline,
                    csd_flag_unprivileged()))
        }
        for property in spec.properties {
            let flags: UInt64 =
                switch property.change {
                case .constant: csd_flag_const()
                case .emits: csd_flag_emits_change()
                case .invalidates: 0
                }
            entries.append(
                csd_vtable_property(
                    keep(property.name), keep(property.signature), propertyGetTrampoline,
                    property.setter == nil ? nil : propertySetTrampoline,
                    flags | (property.setter == nil ? 0 : csd_flag_unprivileged())))
        }
        for signal in spec.signals {
            let names = signal.arguments.map(\.name).joined(separator: "\0") + "\0"
            entries.append(
                csd_vtable_signal(keep(signal.name), keep(signal.arguments.map(\.signature).joined()), keep(names), 0))
        }
        entries.append(csd_vtable_end())
        vtable.initialize(from: entries, count: entries.count)
    }

    /// A C copy of `s` that lives as long as this object (sd-bus keeps the pointers). Copies
    /// every byte, so NUL-separated argument name lists survive.
    private func keep(_ s: String) -> UnsafeMutablePointer<CChar> {
        let bytes = Array(s.utf8)
        let copy = UnsafeMutablePointer<CChar>.allocate(capacity: bytes.count + 1)
        for (i, byte) in bytes.enumerated() { copy[i] = CChar(bitPattern: byte) }
        copy[bytes.count] = 0
        strings.append(copy)
        return copy
    }

    func method(named name: String) -> InterfaceSpec.Method? {
        spec.methods.first { $0.name == name }
    }

    func property(named name: String) -> InterfaceSpec.Property? {
        spec.properties.first { $0.name == name }
    }

    deinit {
        sd_bus_slot_unref(slot)
        vtable.deallocate()
        for s in strings { s.deallocate() }
    }
}

// One trampoline per callback kind; the object comes back through userdata. They run on the bus
// thread, inside sd_bus_process, which is the only thread that touches these objects.

private let methodTrampoline: sd_bus_message_handler_t = { m, userdata, retError in
    guard let m, let userdata else { return -EINVAL }
    let object = Unmanaged<ExportedObject>.fromOpaque(userdata).takeUnretainedValue()
    return object.state.accept(call: m, for: object, error: retError)
}

private let propertyGetTrampoline: sd_bus_property_get_t = { _, _, _, property, reply, userdata, retError in
    guard let reply, let userdata, let property else { return -EINVAL }
    let object = Unmanaged<ExportedObject>.fromOpaque(userdata).takeUnretainedValue()
    guard let value = object.values[String(cString: property)] else { return -ENOENT }
    do throws(BusError) {
        try MessageWriter.append(value, to: reply)
        return 1
    } catch {
        return sd_bus_error_set(retError, error.name, error.message)
    }
}

private let propertySetTrampoline: sd_bus_property_set_t = { bus, path, interface, property, value, userdata, retError in
    guard let value, let userdata, let property else { return -EINVAL }
    let object = Unmanaged<ExportedObject>.fromOpaque(userdata).takeUnretainedValue()
    let name = String(cString: property)
    guard let spec = object.property(named: name), let setter = spec.setter else { return -EPERM }
    do {
        guard let newValue = try MessageReader.readNext(value), newValue.signature == spec.signature else {
            throw BusError.invalidArgs("\(name) takes type \(spec.signature)")
        }
        try setter(newValue)
        guard object.values[name] != newValue else { return 1 }
        object.values[name] = newValue
        // sd-bus does not announce writes itself.
        if spec.change == .emits, let bus, let path, let interface {
            _ = try withStrv([name]) { strv in sd_bus_emit_properties_changed_strv(bus, path, interface, strv) }
        }
        return 1
    } catch let error as BusError {
        return sd_bus_error_set(retError, error.name, error.message)
    } catch {
        return sd_bus_error_set(retError, BusError.failed("").name, "\(error)")
    }
}
