// SPDX-License-Identifier: GPL-2.0-or-later

/// The Lua chunks that write one file on the Frame: open, the contents in escaped pieces, close.
/// Each ends with `print(1)`, so each has a reply (`reply`) to wait for before the next is sent:
/// the firmware keeps one pending chunk only, and a second write would replace the first.
public enum LuaFileUpload {
    /// What every upload command prints when it worked.
    public static let reply = "1"
    /// The file handle's global: unlikely to clash with the app's.
    static let handle = "_gf"

    /// Mode 'w' (truncate): older firmware accepts only one-letter modes, newer ones look at the
    /// first letter only ('write' works there too).
    public static func open(_ name: String) throws(LuaUploadError) -> String {
        guard isValidName(name) else { throw .badFileName(name) }
        return "\(handle)=frame.file.open('\(name)','w');print(1)"
    }

    public static func write(_ escaped: String) -> String { "\(handle):write(\"\(escaped)\");print(1)" }

    public static let close = "\(handle):close();\(handle)=nil;print(1)"

    /// Deletes a file if there is one (the firmware raises when there is none, hence the pcall).
    public static func remove(_ name: String) throws(LuaUploadError) -> String {
        guard isValidName(name) else { throw .badFileName(name) }
        return "pcall(frame.file.remove,'\(name)');print(1)"
    }

    /// The bytes a write command adds around its escaped text (computed from `write`, so it is
    /// right whatever the handle's name).
    public static var writeOverhead: Int { write("").utf8.count }

    /// Open, writes, close for `contents`; every chunk within `maxLuaString` bytes.
    public static func commands(name: String, contents: [UInt8], maxLuaString: Int) throws(LuaUploadError) -> [String] {
        let open = try open(name)
        guard open.utf8.count <= maxLuaString, close.utf8.count <= maxLuaString else {
            throw .limitTooSmall(maxLuaString)
        }
        let pieces = try LuaEscape.chunks(contents, limit: maxLuaString - writeOverhead)
        return [open] + pieces.map(write) + [close]
    }

    /// Letters, digits, `_`, `-` and `.`, 1…64 bytes: nothing to quote inside `'…'`.
    public static func isValidName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= 64
            && name.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 | 0x20 >= 0x61 && $0 | 0x20 <= 0x7A) || $0 == 0x5F || $0 == 0x2D || $0 == 0x2E }
    }
}
