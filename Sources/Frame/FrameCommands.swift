// SPDX-License-Identifier: GPL-2.0-or-later
import Glasses

/// What the check reads from the glasses.
public struct FrameDeviceInfo: Sendable, Equatable {
    /// `frame.FIRMWARE_VERSION`, e.g. "v25.080.0838"; nil if the firmware has none.
    public var firmwareVersion: String?
    /// 0…100.
    public var battery: UInt8?
    /// The version global of the app loaded now, if any.
    public var runningApp: String?
    /// The version in the stamp file: the stored app, completely uploaded.
    public var storedApp: String?

    public init(firmwareVersion: String?, battery: UInt8?, runningApp: String?, storedApp: String?) {
        self.firmwareVersion = firmwareVersion
        self.battery = battery
        self.runningApp = runningApp
        self.storedApp = storedApp
    }
}

/// The Lua chunks of a Frame session. Each fits the Frame's usual 244-byte Lua string (MTU 247)
/// and holds no user text (that travels as app data).
public enum FrameCommands {
    /// One round trip, four prints: firmware version, battery, the running app's version and the
    /// stored app's (the stamp file; '-' when a value is missing). Nothing printed is empty: an
    /// empty print would not count as a reply.
    public static let check = """
        local k,s=pcall(function() local f=frame.file.open('\(FrameApp.stampFile)') local v=f:read() f:close() return v end) \
        print(frame.FIRMWARE_VERSION or '-') print(frame.battery_level()) print(\(FrameApp.versionName) or '-') print(k and s~='' and s or '-')
        """
    /// How many lines `check` prints.
    public static let checkReplies = 4

    /// Parses the reply of `check` (its lines joined by `\n`, as `LuaRepl.execute` returns them).
    public static func parseCheck(_ reply: String) throws(LuaReplError) -> FrameDeviceInfo {
        let lines = reply.split(separator: "\n", omittingEmptySubsequences: false).map { String($0).trimmingSpaces }
        guard lines.count == checkReplies, lines.allSatisfy({ !$0.isEmpty }) else {
            throw .unexpectedReply("a device check gave \(lines.count) lines")
        }
        func value(_ s: String) -> String? { s == "-" ? nil : s }
        var battery: UInt8?
        if lines[1] != "-" {
            // The firmware reports a float; a reading just over 100 on the charger is 100.
            guard let level = Double(lines[1]), level.isFinite, level >= 0 else {
                throw .unexpectedReply("a battery level of \(lines[1].debugDescription)")
            }
            battery = UInt8(min(100, level.rounded()))
        }
        return FrameDeviceInfo(firmwareVersion: value(lines[0]), battery: battery, runningApp: value(lines[2]), storedApp: value(lines[3]))
    }

    /// Everything that puts `app` on the device, in order: the old stamp goes first, then every
    /// file (the version stamped into the app file), then the new stamp, so an upload cut short
    /// anywhere leaves no stamp that matches. Each command prints `LuaFileUpload.reply`.
    public static func upload(_ app: FrameApp, maxLuaString: Int) throws(LuaUploadError) -> [String] {
        var commands = [try LuaFileUpload.remove(FrameApp.stampFile)]
        for file in app.files {
            commands += try LuaFileUpload.commands(name: file.name, contents: app.uploaded(file), maxLuaString: maxLuaString)
        }
        commands += try LuaFileUpload.commands(name: FrameApp.stampFile, contents: Array(app.version.utf8), maxLuaString: maxLuaString)
        return commands
    }

    /// Runs the loaded app's main loop again after a break (its globals survive a break); it
    /// answers with `AppMessage.ready`, not a print.
    public static let resume = "glassd_run()"

    /// Reboots into the Nordic Secure DFU bootloader (it advertises "Frame Update").
    public static let enterBootloader = "frame.update()"

    /// Loads the stored app afresh (the firmware's require reads the file every time) and runs
    /// it, without a VM reset.
    public static let load = "require('glassd_app') glassd_run()"
}

extension String {
    fileprivate var trimmingSpaces: String {
        String(drop(while: { $0 == " " || $0 == "\t" }).reversed().drop(while: { $0 == " " || $0 == "\t" }).reversed())
    }
}
