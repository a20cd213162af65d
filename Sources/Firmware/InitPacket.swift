// SPDX-License-Identifier: GPL-2.0-or-later

/// What glassd reads of an init packet (Nordic's dfu-cc.proto, as nrfutil writes it): the
/// command inside Packet.command or Packet.signed_command.command, its InitCommand's app_size and
/// image hash. Enough to refuse a package whose image is not the one its init packet describes
/// before the glasses are touched; the bootloader checks the signature.
public struct InitPacket: Sendable, Equatable {
    /// InitCommand.app_size.
    public var appSize: Int
    /// InitCommand.hash when it is SHA-256 (hash_type 3): 32 bytes, as stored.
    public var sha256: [UInt8]?
    public var signed: Bool

    public init(_ bytes: [UInt8]) throws(DFUPackageError) {
        let packet = try Self.fields(bytes[...])
        var signed = false
        var command: ArraySlice<UInt8>?
        if let plain = packet.bytes(1) {
            command = plain
        } else if let wrapper = packet.bytes(2) {
            signed = true
            command = try Self.fields(wrapper).bytes(1)
        }
        guard let command, let initCommand = try Self.fields(command).bytes(2) else {
            throw .invalidInitPacket("no init command")
        }
        let fields = try Self.fields(initCommand)
        guard let size = fields.varint(7), size > 0, size <= UInt64(Int32.max) else {
            throw .invalidInitPacket("no application size")
        }
        appSize = Int(size)
        self.signed = signed
        if let hash = fields.bytes(8) {
            let hashFields = try Self.fields(hash)
            if hashFields.varint(1) == 3, let digest = hashFields.bytes(2), digest.count == 32 { sha256 = Array(digest) }
        }
    }

    /// One protobuf message's fields (last one wins, as protobuf reads a repeated scalar).
    private struct Fields {
        var varints: [UInt64: UInt64] = [:]
        var blobs: [UInt64: ArraySlice<UInt8>] = [:]
        func varint(_ n: UInt64) -> UInt64? { varints[n] }
        func bytes(_ n: UInt64) -> ArraySlice<UInt8>? { blobs[n] }
    }

    private static func fields(_ bytes: ArraySlice<UInt8>) throws(DFUPackageError) -> Fields {
        var fields = Fields()
        var i = bytes.startIndex
        func varint() throws(DFUPackageError) -> UInt64 {
            var value: UInt64 = 0
            var shift: UInt64 = 0
            while true {
                guard i < bytes.endIndex, shift < 64 else { throw .invalidInitPacket("a truncated number") }
                let b = bytes[i]
                i += 1
                value |= UInt64(b & 0x7F) << shift
                if b & 0x80 == 0 { return value }
                shift += 7
            }
        }
        while i < bytes.endIndex {
            let key = try varint()
            let number = key >> 3
            guard number > 0 else { throw .invalidInitPacket("field number 0") }
            switch key & 7 {
            case 0: fields.varints[number] = try varint()
            case 1, 5:
                let width = key & 7 == 1 ? 8 : 4
                guard bytes.endIndex - i >= width else { throw .invalidInitPacket("a truncated fixed field") }
                i += width
            case 2:
                let length = try varint()
                guard length <= UInt64(bytes.endIndex - i) else { throw .invalidInitPacket("a field longer than the packet") }
                fields.blobs[number] = bytes[i..<(i + Int(length))]
                i += Int(length)
            default: throw .invalidInitPacket("wire type \(key & 7)")
            }
        }
        return fields
    }
}
