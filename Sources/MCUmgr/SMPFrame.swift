// SPDX-License-Identifier: GPL-2.0-or-later

/// What an SMP frame asks or answers (the low three bits of its first byte).
public enum SMPOperation: UInt8, Sendable, Equatable {
    case read = 0
    case readResponse = 1
    case write = 2
    case writeResponse = 3

    /// The operation that answers this request; nil for an answer.
    public var response: SMPOperation? {
        switch self {
        case .read: .readResponse
        case .write: .writeResponse
        case .readResponse, .writeResponse: nil
        }
    }
}

/// The 8-byte header in front of every SMP frame (Zephyr's SMP specification): multi-byte fields
/// big-endian, whatever the device's own byte order.
public struct SMPHeader: Sendable, Equatable {
    public static let size = 8
    /// SMP version 2 ("1" on the wire): errors come as `err {group, rc}`. A device that only
    /// knows version 1 answers with 0 and a plain `rc`; both are read.
    public static let sentVersion: UInt8 = 1

    public var operation: SMPOperation
    public var version: UInt8
    public var flags: UInt8
    /// The CBOR payload's length in bytes.
    public var length: UInt16
    public var group: UInt16
    public var sequence: UInt8
    public var command: UInt8

    public init(
        operation: SMPOperation, version: UInt8 = SMPHeader.sentVersion, flags: UInt8 = 0, length: UInt16,
        group: UInt16, sequence: UInt8, command: UInt8
    ) {
        self.operation = operation
        self.version = version
        self.flags = flags
        self.length = length
        self.group = group
        self.sequence = sequence
        self.command = command
    }

    public var encoded: [UInt8] {
        [
            version << 3 | operation.rawValue, flags, UInt8(length >> 8), UInt8(length & 0xff),
            UInt8(group >> 8), UInt8(group & 0xff), sequence, command,
        ]
    }

    /// The header at the start of `bytes` (at least 8 of them).
    public static func decode(_ bytes: some RandomAccessCollection<UInt8>) throws(SMPFrameError) -> SMPHeader {
        guard bytes.count >= size else { throw .tooShort(bytes.count) }
        let b = Array(bytes.prefix(size))
        // Bits 5–7 are reserved (zero); versions 2 and 3 are not defined yet.
        guard b[0] & 0xe0 == 0, let operation = SMPOperation(rawValue: b[0] & 0x07) else { throw .badHeader(b[0]) }
        let version = (b[0] >> 3) & 0x03
        guard version <= 1 else { throw .unsupportedVersion(version) }
        return SMPHeader(
            operation: operation, version: version, flags: b[1], length: UInt16(b[2]) << 8 | UInt16(b[3]),
            group: UInt16(b[4]) << 8 | UInt16(b[5]), sequence: b[6], command: b[7])
    }
}

/// A whole SMP frame: its header and its CBOR map.
public struct SMPFrame: Sendable, Equatable {
    public var header: SMPHeader
    public var payload: CBOR

    public init(header: SMPHeader, payload: CBOR) {
        self.header = header
        self.payload = payload
    }

    /// The frame's bytes, the header's length set from the payload.
    public func encoded() throws(SMPFrameError) -> [UInt8] {
        let body = payload.encoded
        guard body.count <= Int(UInt16.max) else { throw .payloadTooLong(body.count) }
        var header = header
        header.length = UInt16(body.count)
        return header.encoded + body
    }

    /// Exactly one frame: its header's length must account for every byte after it, and the
    /// payload must be a CBOR map (every SMP command's is; an empty payload reads as `{}`).
    public static func decode(_ bytes: [UInt8]) throws(SMPFrameError) -> SMPFrame {
        let header = try SMPHeader.decode(bytes)
        guard bytes.count == SMPHeader.size + Int(header.length) else {
            throw .lengthMismatch(declared: Int(header.length), actual: bytes.count - SMPHeader.size)
        }
        guard header.length > 0 else { return SMPFrame(header: header, payload: .map([])) }
        let payload: CBOR
        do {
            payload = try CBOR.decode(Array(bytes[SMPHeader.size...]))
        } catch {
            throw .badPayload(error)
        }
        guard case .map = payload else { throw .payloadNotAMap }
        return SMPFrame(header: header, payload: payload)
    }

    /// The device's error in this answer, if it reports one: `err {group, rc}` (SMP version 2,
    /// an error of the command's group) or a non-zero `rc` (version 1, and version 2's errors of
    /// the SMP layer itself, MGMT_ERR_*). Either may come whatever the header's version says.
    public var error: SMPError? {
        if let err = payload["err"], let rc = err["rc"]?.intValue, rc != 0 {
            let group = err["group"]?.intValue.flatMap(UInt16.init(exactly:)) ?? header.group
            return SMPError(group: group, rc: rc, isGroupCode: true)
        }
        if let rc = payload["rc"]?.intValue, rc != 0 {
            return SMPError(group: header.group, rc: rc, isGroupCode: false)
        }
        return nil
    }
}

/// Why bytes are not a well-formed SMP frame.
public enum SMPFrameError: Error, Sendable, Equatable, CustomStringConvertible {
    case tooShort(Int)
    /// Reserved bits set in the first byte.
    case badHeader(UInt8)
    case unsupportedVersion(UInt8)
    case lengthMismatch(declared: Int, actual: Int)
    case badPayload(CBORError)
    case payloadNotAMap
    case payloadTooLong(Int)

    public var description: String {
        switch self {
        case .tooShort(let n): "an SMP frame of \(n) bytes is shorter than its 8-byte header"
        case .badHeader(let b): "SMP header byte 0x\(String(b, radix: 16)) has reserved bits set"
        case .unsupportedVersion(let v): "SMP version \(v) is not supported"
        case .lengthMismatch(let declared, let actual): "SMP header says \(declared) payload bytes, \(actual) came"
        case .badPayload(let e): "SMP payload: \(e)"
        case .payloadNotAMap: "SMP payload is not a CBOR map"
        case .payloadTooLong(let n): "an SMP payload of \(n) bytes exceeds 65535"
        }
    }
}
