// SPDX-License-Identifier: GPL-2.0-or-later
import Crypto

/// An image's version as its MCUboot header holds it.
public struct MCUbootVersion: Sendable, Equatable, CustomStringConvertible {
    public var major: UInt8
    public var minor: UInt8
    public var revision: UInt16
    public var build: UInt32

    public init(major: UInt8, minor: UInt8, revision: UInt16, build: UInt32) {
        self.major = major
        self.minor = minor
        self.revision = revision
        self.build = build
    }

    /// "major.minor.revision", with "+build" only when the build is not 0: how the firmware
    /// names itself (`frame.FIRMWARE_VERSION` is "0.8.8" for an image signed as 0.8.8+0).
    public var normalized: String {
        "\(major).\(minor).\(revision)" + (build == 0 ? "" : "+\(build)")
    }

    public var description: String { normalized }
}

/// One TLV entry: its type and where its value lies in the file.
public struct MCUbootTLV: Sendable, Equatable {
    public var type: UInt16
    /// In the protected area (covered by the image hash) or the unprotected one.
    public var isProtected: Bool
    public var value: Range<Int>
}

/// Why a file is not an MCUboot image glassd will send.
public enum MCUbootImageError: Error, Sendable, Equatable, CustomStringConvertible {
    case tooLarge(size: Int, limit: Int)
    /// Shorter than the 32-byte header.
    case tooShort(Int)
    case badMagic(UInt32)
    case headerTooSmall(Int)
    /// The header's sizes reach past the file's end.
    case pastEnd(needed: Int, size: Int)
    case malformedTLVs(String)
    case missingSHA256
    /// The image's bytes do not hash to its SHA-256 TLV: damaged, or edited after signing.
    case sha256Mismatch

    public var description: String {
        switch self {
        case .tooLarge(let size, let limit): "the image file is \(size) bytes, over the \(limit) allowed"
        case .tooShort(let n): "a \(n)-byte file is too short for an MCUboot image header"
        case .badMagic(let m): "not an MCUboot image (magic 0x\(String(m, radix: 16)))"
        case .headerTooSmall(let n): "the MCUboot header says it is \(n) bytes, under 32"
        case .pastEnd(let needed, let size): "the MCUboot header's sizes need \(needed) bytes; the file has \(size)"
        case .malformedTLVs(let why): "the MCUboot image's TLV area is malformed: \(why)"
        case .missingSHA256: "the MCUboot image has no SHA-256 TLV"
        case .sha256Mismatch: "the MCUboot image does not match its SHA-256 (damaged or changed after signing)"
        }
    }
}

/// A signed MCUboot image file (`zephyr.signed.bin`), checked whole before anything is sent:
/// header, TLV areas, and the SHA-256 TLV against the bytes it covers. Signatures are not
/// checked: the device's MCUboot does that with its own key.
public struct MCUbootImage: Sendable {
    /// Halo's image is about 600 KB.
    public static let maxFileBytes = 4 << 20
    public static let magic: UInt32 = 0x96f3_b83d
    static let protectedInfoMagic: UInt16 = 0x6908
    static let infoMagic: UInt16 = 0x6907
    static let sha256Type: UInt16 = 0x10

    /// The whole file: what the upload sends.
    public let bytes: [UInt8]
    public let loadAddress: UInt32
    public let headerSize: Int
    public let protectedTLVSize: Int
    public let imageSize: Int
    public let flags: UInt32
    public let version: MCUbootVersion
    public let tlvs: [MCUbootTLV]
    /// The SHA-256 TLV: what image state calls a slot's `hash`.
    public let tlvHash: [UInt8]
    /// SHA-256 of the whole file: the upload's `sha`.
    public let fileSHA256: [UInt8]

    public init(bytes: [UInt8], maxFileBytes: Int = MCUbootImage.maxFileBytes) throws(MCUbootImageError) {
        guard bytes.count <= maxFileBytes else { throw .tooLarge(size: bytes.count, limit: maxFileBytes) }
        guard bytes.count >= 32 else { throw .tooShort(bytes.count) }
        let magic = Self.u32(bytes, 0)
        guard magic == Self.magic else { throw .badMagic(magic) }
        headerSize = Int(Self.u16(bytes, 8))
        protectedTLVSize = Int(Self.u16(bytes, 10))
        imageSize = Int(Self.u32(bytes, 12))
        guard headerSize >= 32 else { throw .headerTooSmall(headerSize) }
        let hashed = headerSize + imageSize + protectedTLVSize
        guard hashed <= bytes.count else { throw .pastEnd(needed: hashed, size: bytes.count) }
        self.bytes = bytes
        loadAddress = Self.u32(bytes, 4)
        flags = Self.u32(bytes, 16)
        version = MCUbootVersion(
            major: bytes[20], minor: bytes[21], revision: Self.u16(bytes, 22), build: Self.u32(bytes, 24))

        let start = headerSize + imageSize
        var tlvs: [MCUbootTLV] = []
        if protectedTLVSize > 0 {
            try Self.area(bytes, at: start, magic: Self.protectedInfoMagic, length: protectedTLVSize, into: &tlvs)
        }
        try Self.area(bytes, at: start + protectedTLVSize, magic: Self.infoMagic, length: nil, into: &tlvs)
        self.tlvs = tlvs
        // MCUboot (and Zephyr's img_mgmt) take the hash from the unprotected area.
        let hashes = tlvs.filter { $0.type == Self.sha256Type && !$0.isProtected }
        guard let hash = hashes.first else { throw .missingSHA256 }
        guard hashes.count == 1, hash.value.count == 32 else {
            throw .malformedTLVs("\(hashes.count) SHA-256 entries, the first of \(hash.value.count) bytes")
        }
        tlvHash = Array(bytes[hash.value])
        guard Array(SHA256.hash(data: bytes[0..<hashed])) == tlvHash else { throw .sha256Mismatch }
        fileSHA256 = Array(SHA256.hash(data: bytes))
    }

    /// Reads one TLV area (info header: magic u16, total length u16 including itself) at
    /// `offset`; `length`, when known from the image header, must be the area's own.
    private static func area(
        _ bytes: [UInt8], at offset: Int, magic: UInt16, length: Int?, into tlvs: inout [MCUbootTLV]
    ) throws(MCUbootImageError) {
        let protected = magic == protectedInfoMagic
        let name = protected ? "protected TLV area" : "TLV area"
        guard offset + 4 <= bytes.count else { throw .malformedTLVs("the \(name) is missing") }
        let found = u16(bytes, offset)
        guard found == magic else { throw .malformedTLVs("the \(name) has magic 0x\(String(found, radix: 16))") }
        let total = Int(u16(bytes, offset + 2))
        if let length, total != length {
            throw .malformedTLVs("the \(name) is \(total) bytes, the header says \(length)")
        }
        guard total >= 4, offset + total <= bytes.count else {
            throw .malformedTLVs("the \(name)'s length \(total) does not fit the file")
        }
        var p = offset + 4
        let end = offset + total
        while p < end {
            guard p + 4 <= end else { throw .malformedTLVs("an entry header crosses the end of the \(name)") }
            let valueEnd = p + 4 + Int(u16(bytes, p + 2))
            guard valueEnd <= end else { throw .malformedTLVs("an entry crosses the end of the \(name)") }
            tlvs.append(MCUbootTLV(type: u16(bytes, p), isProtected: protected, value: (p + 4)..<valueEnd))
            p = valueEnd
        }
    }

    private static func u16(_ b: [UInt8], _ at: Int) -> UInt16 { UInt16(b[at]) | UInt16(b[at + 1]) << 8 }

    private static func u32(_ b: [UInt8], _ at: Int) -> UInt32 {
        UInt32(b[at]) | UInt32(b[at + 1]) << 8 | UInt32(b[at + 2]) << 16 | UInt32(b[at + 3]) << 24
    }
}
