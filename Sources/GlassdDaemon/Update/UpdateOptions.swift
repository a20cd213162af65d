// SPDX-License-Identifier: GPL-2.0-or-later
import DBusKit
import Glibc
import Updates

/// Update's a{sv}: a component's image (s path or h descriptor) by the component's name, and
/// `force` (b).
struct UpdateOptions: Sendable {
    var sources: [String: UpdateImages.Source] = [:]
    var force = false

    init(_ value: DBusValue?, components: [String]) throws(BusError) {
        guard case .dict(_, _, let entries)? = value else { throw BusError.invalidArgs("Update takes a{sv} options.") }
        // The descriptors are this call's (DBusKit passed copies): read now, all closed in any case.
        let descriptors = entries.compactMap { entry -> Int32? in
            switch entry.value {
            case .unixFD(let fd), .variant(.unixFD(let fd)): fd
            default: nil
            }
        }
        defer { for fd in descriptors { close(fd) } }
        for entry in entries {
            var inner = entry.value
            if case .variant(let v) = inner { inner = v }
            let key = entry.key.string ?? "?"
            switch (key, inner) {
            case (let name, .string(let path)) where components.contains(name):
                sources[name] = .path(path)
            case (let name, .unixFD(let fd)) where components.contains(name):
                do {
                    sources[name] = .contents(try UpdateImages.read(fd, name))
                } catch {
                    throw error.busError
                }
            case ("force", .bool(let force)):
                self.force = force
            default:
                throw BusError.invalidArgs(
                    "Unknown update option \(key) of type \(inner.signature): use \(components.joined(separator: " or ")) (s or h) and force (b).")
            }
        }
    }
}
