// SPDX-License-Identifier: GPL-2.0-or-later
import DBusKit
import GlassdAPI
import GlassdContract
import Glasses
import Glibc
import Updates

/// Update's a{sv}: `force` (b), and a component's image (s path or h descriptor) by the
/// component's name (the keys the XML keeps for the kinds to name).
struct UpdateOptions: Sendable {
    var sources: [String: UpdateImages.Source] = [:]
    var force = false

    init(_ value: DBusValue?, components: [String]) throws(UpdateRefusal) {
        guard let value, case .dict(_, _, let entries) = value else { throw .arguments("Update takes a{sv} options.") }
        // The descriptors are this call's (DBusKit passed copies): read now, all closed in any case.
        let descriptors = entries.compactMap { entry -> Int32? in
            switch entry.value {
            case .unixFD(let fd), .variant(.unixFD(let fd)): fd
            default: nil
            }
        }
        defer { for fd in descriptors { close(fd) } }
        func unknown(_ key: String, _ type: String) -> UpdateRefusal {
            .arguments(
                "Unknown update option \(key) of type \(type): use \(components.joined(separator: " or ")) (s or h) and force (b).")
        }
        let options: GlassdBus.Manager1.UpdateOptions
        do throws(ContractError) {
            options = try GlassdBus.Manager1.UpdateOptions(value)
        } catch {
            switch error {
            case .unknownKey(let key, let type, _), .wrongType(let key, _, let type): throw unknown(key, type)
            case .missingArgument(let key): throw unknown(key, "?")
            }
        }
        force = options.force ?? false
        for (key, inner) in options.others.sorted(by: { $0.key < $1.key }) {
            guard components.contains(key) else { throw unknown(key, inner.signature) }
            switch inner {
            case .string(let path):
                sources[key] = .path(path)
            case .unixFD(let fd):
                sources[key] = .contents(try UpdateImages.read(fd, key))
            default:
                throw unknown(key, inner.signature)
            }
        }
    }
}
