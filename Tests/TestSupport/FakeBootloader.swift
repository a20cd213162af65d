// SPDX-License-Identifier: GPL-2.0-or-later
import Firmware
import LinkKit
import Synchronization

/// A small, honest model of the nRF5 SDK's Secure DFU bootloader behind two in-memory channels:
/// a command object (maxSize 256) and data objects (maxSize 4096), the CRC over all bytes received,
/// packet receipt notifications, and Execute's rules (0x08 for an incomplete or already executed
/// object, and for a data object before the init packet was executed). Creating the command object
/// starts the update afresh. Its state outlives a dropped link, as the real one's does: `connect()`
/// gives new channels to the same bootloader.
public final class FakeBootloader: Sendable {
    public struct State: Sendable {
        public var command: [UInt8] = []
        public var commandSize = 0
        public var commandExecuted = false
        /// Every data byte received since the init packet was created: executed ones first.
        public var data: [UInt8] = []
        public var executed = 0
        public var objectSize = 0
        public var current = DFUObjectType.command
        public var prn = 0
        public var sincePRN = 0
        // What the test looks at.
        public var packetBytes = 0
        public var dataWrites = 0
        public var requests: [DFURequest] = []
        // What the test arranges.
        public var flipDataWrite: Int?
        /// Corrupt every data write after the first object was executed (a bad link that stays bad).
        public var corruptAfterFirstObject = false
        public var failures: [DFUOpcode: DFUResponse] = [:]
        public var silent = false
        public var dropWhen: (@Sendable (State) -> Bool)?
        // The link.
        public var connection = 0
        public var inbox: PacketInbox?

        public var flash: [UInt8] { Array(data[..<executed]) }
    }

    public static let commandMaxSize = 256
    public static let dataMaxSize = 4096
    public let state = Mutex(State())
    public let maxPacketSize: Int

    public init(maxPacketSize: Int = 244) {
        self.maxPacketSize = maxPacketSize
    }

    public func with<T>(_ body: (inout State) -> T) -> T { state.withLock { body(&$0) } }

    /// A new link: the control and packet channels of one connection.
    public func connect() -> (control: Channel, packet: Channel) {
        let inbox = PacketInbox()
        let id = state.withLock { s in
            s.connection += 1
            s.inbox = inbox
            s.prn = 0
            s.sincePRN = 0
            return s.connection
        }
        return (
            Channel(bootloader: self, connection: id, isControl: true, incoming: inbox),
            Channel(bootloader: self, connection: id, isControl: false, incoming: PacketInbox())
        )
    }

    public final class Channel: ByteChannel {
        public let bootloader: FakeBootloader
        public let connection: Int
        public let isControl: Bool
        public let incoming: PacketInbox
        public var maxPacketSize: Int { bootloader.maxPacketSize }
        public let framing = ChannelFraming.packets

        public init(bootloader: FakeBootloader, connection: Int, isControl: Bool, incoming: PacketInbox) {
            self.bootloader = bootloader
            self.connection = connection
            self.isControl = isControl
            self.incoming = incoming
        }

        public func write(_ bytes: [UInt8]) async throws {
            try bootloader.receive(bytes, control: isControl, connection: connection)
        }
    }

    private func receive(_ bytes: [UInt8], control: Bool, connection: Int) throws {
        var out: [[UInt8]] = []
        var drop = false
        let inbox = try state.withLock { s -> PacketInbox? in
            guard s.connection == connection, s.inbox != nil else { throw ChannelError.closed }
            if control {
                if let reply = Self.handle(bytes, &s) { out.append(reply) }
            } else {
                Self.store(bytes, &s, notify: &out)
            }
            if let rule = s.dropWhen, rule(s) {
                s.dropWhen = nil
                drop = true
            }
            let inbox = s.inbox
            if drop { s.inbox = nil }
            return inbox
        }
        if drop {
            // The link goes before the answer to this write leaves.
            inbox?.finish()
            return
        }
        for reply in out { inbox?.push(reply) }
    }

    private static func handle(_ bytes: [UInt8], _ s: inout State) -> [UInt8]? {
        guard let request = DFURequest.decode(bytes) else {
            return DFUResponse.failed(.create, .opcodeNotSupported, nil).encoded
        }
        s.requests.append(request)
        if s.silent { return nil }
        if let failure = s.failures.removeValue(forKey: request.opcode) { return failure.encoded }
        let op = request.opcode
        switch request {
        case .setPRN(let n):
            s.prn = Int(n)
            s.sincePRN = 0
            return DFUResponse.done(op).encoded
        case .select(.command):
            s.current = .command
            return DFUResponse.selected(
                maxSize: UInt32(commandMaxSize), offset: UInt32(s.command.count), crc: ZlibCRC32.checksum(s.command)
            ).encoded
        case .select(.data):
            s.current = .data
            return DFUResponse.selected(
                maxSize: UInt32(dataMaxSize), offset: UInt32(s.data.count), crc: ZlibCRC32.checksum(s.data)
            ).encoded
        case .create(.command, let size):
            guard size > 0, size <= commandMaxSize else {
                return DFUResponse.failed(op, .insufficientResources, nil).encoded
            }
            // A new init packet starts the update afresh: the image's progress goes too.
            (s.command, s.commandExecuted, s.data, s.executed, s.objectSize, s.sincePRN) = ([], false, [], 0, 0, 0)
            s.commandSize = Int(size)
            s.current = .command
            return DFUResponse.done(op).encoded
        case .create(.data, let size):
            guard s.commandExecuted else { return DFUResponse.failed(op, .operationNotPermitted, nil).encoded }
            guard size > 0, size <= dataMaxSize else { return DFUResponse.failed(op, .invalidParameter, nil).encoded }
            s.data.removeLast(s.data.count - s.executed)
            s.objectSize = Int(size)
            s.current = .data
            s.sincePRN = 0
            return DFUResponse.done(op).encoded
        case .calculateChecksum:
            let bytes = s.current == .command ? s.command : s.data
            return DFUResponse.checksum(offset: UInt32(bytes.count), crc: ZlibCRC32.checksum(bytes)).encoded
        case .execute where s.current == .command:
            guard s.commandSize > 0, s.command.count == s.commandSize else {
                return DFUResponse.failed(op, .operationNotPermitted, nil).encoded
            }
            s.commandExecuted = true
            return DFUResponse.done(op).encoded
        case .execute:
            guard s.objectSize > 0, s.data.count == s.executed + s.objectSize else {
                return DFUResponse.failed(op, .operationNotPermitted, nil).encoded
            }
            s.executed = s.data.count
            s.objectSize = 0
            return DFUResponse.done(op).encoded
        case .abort:
            return DFUResponse.done(op).encoded
        }
    }

    private static func store(_ bytes: [UInt8], _ s: inout State, notify: inout [[UInt8]]) {
        s.packetBytes += bytes.count
        var bytes = bytes
        if s.current == .command {
            guard s.command.count + bytes.count <= s.commandSize else { return }
            s.command += bytes
        } else {
            guard s.objectSize > 0, s.data.count + bytes.count <= s.executed + s.objectSize else { return }
            s.dataWrites += 1
            if s.flipDataWrite == s.dataWrites || (s.corruptAfterFirstObject && s.executed > 0) {
                bytes[bytes.count / 2] ^= 0xFF
                s.flipDataWrite = nil
            }
            s.data += bytes
        }
        guard s.prn > 0 else { return }
        s.sincePRN += 1
        if s.sincePRN == s.prn {
            s.sincePRN = 0
            let held = s.current == .command ? s.command : s.data
            notify.append(DFUResponse.checksum(offset: UInt32(held.count), crc: ZlibCRC32.checksum(held)).encoded)
        }
    }
}
