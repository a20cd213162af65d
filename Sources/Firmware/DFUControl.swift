// SPDX-License-Identifier: GPL-2.0-or-later

/// The two kinds of object the bootloader takes.
public enum DFUObjectType: UInt8, Sendable, Equatable {
    /// The init packet (`application.dat`).
    case command = 0x01
    /// The firmware image (`application.bin`).
    case data = 0x02
}

/// The control-point opcodes the Monocle's reduced-protocol bootloader answers.
public enum DFUOpcode: UInt8, Sendable, Equatable, CustomStringConvertible {
    case create = 0x01
    case setPRN = 0x02
    case calculateChecksum = 0x03
    case execute = 0x04
    case select = 0x06
    case abort = 0x0C

    public var description: String {
        switch self {
        case .create: "Create"
        case .setPRN: "Set PRN"
        case .calculateChecksum: "Calculate checksum"
        case .execute: "Execute"
        case .select: "Select"
        case .abort: "Abort"
        }
    }
}

/// One request written to the control point.
public enum DFURequest: Sendable, Equatable {
    case create(DFUObjectType, size: UInt32)
    /// A checksum notification every `n` packet writes; 0 turns them off.
    case setPRN(UInt16)
    case calculateChecksum
    case execute
    case select(DFUObjectType)
    case abort

    public var opcode: DFUOpcode {
        switch self {
        case .create: .create
        case .setPRN: .setPRN
        case .calculateChecksum: .calculateChecksum
        case .execute: .execute
        case .select: .select
        case .abort: .abort
        }
    }

    public var encoded: [UInt8] {
        switch self {
        case .create(let type, let size): [opcode.rawValue, type.rawValue] + LittleEndian.bytes(size)
        case .setPRN(let n): [opcode.rawValue, UInt8(n & 0xFF), UInt8(n >> 8)]
        case .select(let type): [opcode.rawValue, type.rawValue]
        case .calculateChecksum, .execute, .abort: [opcode.rawValue]
        }
    }

    /// Reads a request back (the fake bootloader's side); nil for anything malformed.
    public static func decode(_ bytes: [UInt8]) -> DFURequest? {
        guard let first = bytes.first, let op = DFUOpcode(rawValue: first) else { return nil }
        switch (op, bytes.count) {
        case (.create, 6):
            guard let type = DFUObjectType(rawValue: bytes[1]) else { return nil }
            return .create(type, size: LittleEndian.u32(bytes, at: 2))
        case (.setPRN, 3): return .setPRN(UInt16(bytes[1]) | UInt16(bytes[2]) << 8)
        case (.select, 2):
            guard let type = DFUObjectType(rawValue: bytes[1]) else { return nil }
            return .select(type)
        case (.calculateChecksum, 1): return .calculateChecksum
        case (.execute, 1): return .execute
        case (.abort, 1): return .abort
        default: return nil
        }
    }
}

enum LittleEndian {
    static func bytes(_ value: UInt32) -> [UInt8] {
        [UInt8(value & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value >> 16 & 0xFF), UInt8(value >> 24)]
    }

    /// The caller has checked that four bytes are there.
    static func u32(_ bytes: [UInt8], at index: Int) -> UInt32 {
        (0..<4).reduce(UInt32(0)) { $0 | UInt32(bytes[index + $1]) << (8 * $1) }
    }
}
