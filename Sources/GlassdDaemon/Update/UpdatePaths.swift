// SPDX-License-Identifier: GPL-2.0-or-later
import DBusKit
import Foundation
import Glasses
import Glibc
import Updates

/// Update's image paths are opened as glassd's user, who can read what the caller may not (its
/// API key, its database). So a path is taken from root, or from glassd's own user (the session
/// bus), anywhere; from anyone else only under the firmware directory, as its real path (no
/// symlink out of it). Other files are passed as descriptors, opened by the caller (glassctl
/// update does).
enum UpdatePaths {
    static func checked(
        _ options: UpdateOptions, sender: String, firmwareDirectory: String, connection: BusConnection
    ) async throws(UpdateRefusal) -> UpdateOptions {
        let paths = options.sources.values.contains { if case .path = $0 { true } else { false } }
        guard paths else { return options }
        let uid: UInt32?
        do {
            uid = try await connection.call(
                "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                member: "GetConnectionUnixUser", [.string(sender)]
            ).first?.uint32
        } catch {
            throw refused("Cannot tell who is calling, so no file is opened for it.")
        }
        if uid == 0 || uid == geteuid() { return options }
        var checked = options
        for (component, source) in options.sources { checked.sources[component] = try within(source, firmwareDirectory) }
        return checked
    }

    /// `source` with its path resolved, if that is under `directory`.
    private static func within(_ source: UpdateImages.Source, _ directory: String) throws(UpdateRefusal) -> UpdateImages.Source {
        guard case .path(let path) = source else { return source }
        guard let real = realPath(path), let base = realPath(directory), real.hasPrefix(base.hasSuffix("/") ? base : base + "/")
        else {
            throw refused(
                "glassd opens an image path for root only, or one under its firmware directory (\(directory)); "
                    + "pass the file as a descriptor instead (glassctl update --firmware FILE does).")
        }
        return .path(real)
    }

    private static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    private static func refused(_ message: String) -> UpdateRefusal { UpdateRefusal(.accessDenied, message) }
}
