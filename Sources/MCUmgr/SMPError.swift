// SPDX-License-Identifier: GPL-2.0-or-later

/// An error the device answered with. Numbers from Zephyr's headers (mcumgr_err_t for the SMP
/// layer's `rc`, img_mgmt_err_code_t for the image group's `err`), so logs and the updater can
/// say what went wrong without a lookup.
public struct SMPError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The group that answered (`err.group`, or the request's group for a plain `rc`).
    public var group: UInt16
    public var rc: Int
    /// True for `err {group, rc}` (the group's own code), false for a plain `rc` (MGMT_ERR_*).
    public var isGroupCode: Bool

    public init(group: UInt16, rc: Int, isGroupCode: Bool) {
        self.group = group
        self.rc = rc
        self.isGroupCode = isGroupCode
    }

    /// The command (or the group) is not there on this device: MGMT_ERR_ENOTSUP, the answer of a
    /// Zephyr without the command compiled in.
    public var isNotSupported: Bool { !isGroupCode && rc == 8 }

    public var message: String {
        let name = isGroupCode ? Self.groupCodes[group]?[rc] : Self.mgmtCodes[rc]
        return name ?? "error \(rc)"
    }

    public var description: String {
        "the glasses refused an SMP request (group \(group), " + (isGroupCode ? "group code" : "rc") + " \(rc)): \(message)"
    }

    /// MGMT_ERR_*: the SMP layer's codes (a version 1 `rc`).
    static let mgmtCodes: [Int: String] = [
        1: "unknown error", 2: "out of memory", 3: "invalid value", 4: "timed out", 5: "no such entry",
        6: "bad state", 7: "message too large", 8: "not supported", 9: "corrupt", 10: "busy",
        11: "access denied", 12: "protocol version too old", 13: "protocol version too new",
    ]

    /// Group-specific codes of SMP version 2, where documented: group 1 (image management).
    static let groupCodes: [UInt16: [Int: String]] = [
        1: [
            1: "unknown image error", 2: "flash configuration query failed", 3: "no image",
            4: "no TLVs in the image", 5: "invalid TLV", 6: "more than one hash TLV",
            7: "TLV of invalid size", 8: "hash not found", 9: "no free slot", 10: "flash open failed",
            11: "flash read failed", 12: "flash write failed", 13: "flash erase failed", 14: "invalid slot",
            15: "no free memory", 16: "flash context already set", 17: "flash context not set",
            18: "flash area device missing", 19: "invalid page offset", 20: "invalid offset",
            21: "invalid length", 22: "invalid image header", 23: "invalid image header magic",
            24: "invalid hash", 25: "invalid flash address", 26: "getting the version failed",
            27: "the current version is newer", 28: "an image is already pending",
            29: "invalid image vector table", 30: "image too large", 31: "image data overrun",
            32: "image confirmation denied", 33: "setting the test image active denied",
            34: "active slot not known",
        ]
    ]
}
