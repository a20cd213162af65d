// SPDX-License-Identifier: GPL-2.0-or-later

/// The result byte of a control-point response.
public enum DFUResultCode: Sendable, Equatable, CustomStringConvertible {
    case success
    case opcodeNotSupported
    case invalidParameter
    case insufficientResources
    case invalidObject
    case unsupportedType
    case operationNotPermitted
    case operationFailed
    /// The fourth byte says more (`DFUExtendedError`).
    case extendedError
    case unknown(UInt8)

    public init(_ byte: UInt8) {
        switch byte {
        case 0x01: self = .success
        case 0x02: self = .opcodeNotSupported
        case 0x03: self = .invalidParameter
        case 0x04: self = .insufficientResources
        case 0x05: self = .invalidObject
        case 0x07: self = .unsupportedType
        case 0x08: self = .operationNotPermitted
        case 0x0A: self = .operationFailed
        case 0x0B: self = .extendedError
        default: self = .unknown(byte)
        }
    }

    public var description: String {
        switch self {
        case .success: "success"
        case .opcodeNotSupported: "opcode not supported"
        case .invalidParameter: "invalid parameter"
        case .insufficientResources: "insufficient resources"
        case .invalidObject: "invalid object"
        case .unsupportedType: "unsupported type"
        case .operationNotPermitted: "operation not permitted"
        case .operationFailed: "operation failed"
        case .extendedError: "extended error"
        case .unknown(let b): "result 0x\(String(b, radix: 16))"
        }
    }
}

/// The bootloader's reason behind an extended error (0x0B), mostly about the init packet.
public enum DFUExtendedError: Sendable, Equatable, CustomStringConvertible {
    case wrongCommandFormat
    case unknownCommand
    case initCommandInvalid
    case firmwareVersionFailure
    case hardwareVersionFailure
    case softDeviceVersionFailure
    case signatureMissing
    case wrongHashType
    case hashFailed
    case wrongSignatureType
    case verificationFailed
    case insufficientSpace
    case unknown(UInt8)

    public init(_ byte: UInt8) {
        switch byte {
        case 0x02: self = .wrongCommandFormat
        case 0x03: self = .unknownCommand
        case 0x04: self = .initCommandInvalid
        case 0x05: self = .firmwareVersionFailure
        case 0x06: self = .hardwareVersionFailure
        case 0x07: self = .softDeviceVersionFailure
        case 0x08: self = .signatureMissing
        case 0x09: self = .wrongHashType
        case 0x0A: self = .hashFailed
        case 0x0B: self = .wrongSignatureType
        case 0x0C: self = .verificationFailed
        case 0x0D: self = .insufficientSpace
        default: self = .unknown(byte)
        }
    }

    public var description: String {
        switch self {
        case .wrongCommandFormat: "wrong command format"
        case .unknownCommand: "unknown command"
        case .initCommandInvalid: "init command invalid"
        case .firmwareVersionFailure: "firmware version not accepted"
        case .hardwareVersionFailure: "hardware version not accepted"
        case .softDeviceVersionFailure: "SoftDevice version not accepted"
        case .signatureMissing: "signature missing"
        case .wrongHashType: "wrong hash type"
        case .hashFailed: "hash check failed"
        case .wrongSignatureType: "wrong signature type"
        case .verificationFailed: "signature verification failed"
        case .insufficientSpace: "insufficient space"
        case .unknown(let b): "extended error 0x\(String(b, radix: 16))"
        }
    }
}

/// Why a notification is not a well-formed control-point response.
public enum DFUResponseError: Error, Sendable, Equatable {
    /// Fewer than the three bytes every response has.
    case tooShort([UInt8])
    /// The first byte is not 0x60.
    case notAResponse([UInt8])
    case unknownOpcode(UInt8)
    /// The length does not match what the opcode and result call for.
    case wrongLength(DFUOpcode, expected: Int, got: Int)
}

/// A parsed control-point notification (`60 <op> <result> [payload]`).
public enum DFUResponse: Sendable, Equatable {
    /// Success of Create, Set PRN, Execute or Abort (no payload).
    case done(DFUOpcode)
    /// Success of Select: what the bootloader holds of that object type.
    case selected(maxSize: UInt32, offset: UInt32, crc: UInt32)
    /// Success of Calculate checksum, and the unsolicited packet receipt notification.
    case checksum(offset: UInt32, crc: UInt32)
    case failed(DFUOpcode, DFUResultCode, DFUExtendedError?)

    public var opcode: DFUOpcode {
        switch self {
        case .done(let op), .failed(let op, _, _): op
        case .selected: .select
        case .checksum: .calculateChecksum
        }
    }

    public static func decode(_ bytes: [UInt8]) throws(DFUResponseError) -> DFUResponse {
        guard bytes.count >= 3 else { throw .tooShort(bytes) }
        guard bytes[0] == 0x60 else { throw .notAResponse(bytes) }
        guard let op = DFUOpcode(rawValue: bytes[1]) else { throw .unknownOpcode(bytes[1]) }
        let result = DFUResultCode(bytes[2])
        func expect(_ count: Int) throws(DFUResponseError) {
            guard bytes.count == count else { throw .wrongLength(op, expected: count, got: bytes.count) }
        }
        switch (result, op) {
        case (.success, .select):
            try expect(15)
            return .selected(
                maxSize: LittleEndian.u32(bytes, at: 3), offset: LittleEndian.u32(bytes, at: 7),
                crc: LittleEndian.u32(bytes, at: 11))
        case (.success, .calculateChecksum):
            try expect(11)
            return .checksum(offset: LittleEndian.u32(bytes, at: 3), crc: LittleEndian.u32(bytes, at: 7))
        case (.success, _):
            try expect(3)
            return .done(op)
        case (.extendedError, _):
            try expect(4)
            return .failed(op, result, DFUExtendedError(bytes[3]))
        default:
            try expect(3)
            return .failed(op, result, nil)
        }
    }

    /// The bytes the bootloader sends (the fake bootloader's side, and fixtures).
    public var encoded: [UInt8] {
        switch self {
        case .done(let op): [0x60, op.rawValue, 0x01]
        case .selected(let maxSize, let offset, let crc):
            [0x60, 0x06, 0x01] + LittleEndian.bytes(maxSize) + LittleEndian.bytes(offset) + LittleEndian.bytes(crc)
        case .checksum(let offset, let crc):
            [0x60, 0x03, 0x01] + LittleEndian.bytes(offset) + LittleEndian.bytes(crc)
        case .failed(let op, let result, let extended):
            [0x60, op.rawValue, result.byte] + (extended.map { [$0.byte] } ?? [])
        }
    }
}

extension DFUResultCode {
    var byte: UInt8 {
        switch self {
        case .success: 0x01
        case .opcodeNotSupported: 0x02
        case .invalidParameter: 0x03
        case .insufficientResources: 0x04
        case .invalidObject: 0x05
        case .unsupportedType: 0x07
        case .operationNotPermitted: 0x08
        case .operationFailed: 0x0A
        case .extendedError: 0x0B
        case .unknown(let b): b
        }
    }
}

extension DFUExtendedError {
    var byte: UInt8 {
        switch self {
        case .wrongCommandFormat: 0x02
        case .unknownCommand: 0x03
        case .initCommandInvalid: 0x04
        case .firmwareVersionFailure: 0x05
        case .hardwareVersionFailure: 0x06
        case .softDeviceVersionFailure: 0x07
        case .signatureMissing: 0x08
        case .wrongHashType: 0x09
        case .hashFailed: 0x0A
        case .wrongSignatureType: 0x0B
        case .verificationFailed: 0x0C
        case .insufficientSpace: 0x0D
        case .unknown(let b): b
        }
    }
}
