// SPDX-License-Identifier: GPL-2.0-or-later
import Foundation

/// Puts back together a JSON text that TEN's message collector split into chunks
/// `msg_id|part_index|total_parts|base64 slice` (1-based index; `???` while the total is unknown).
/// Parts may come in any order and more than once; a message not complete 5 s after its first part
/// is given up, as TEN's own receiver does. Memory stays bounded whatever is sent.
public struct TranscriptChunks<C: Clock>: Sendable where C.Duration == Duration {
    /// Parts that did not parse or could not belong to their message.
    public private(set) var dropped = 0
    /// Messages given up: expired, pushed out by newer ones, too large, or not base64 once joined.
    public private(set) var discarded = 0

    private struct Message: Sendable {
        var first: C.Instant
        var total: Int?
        var parts: [Int: String] = [:]
        var size = 0  // base64 characters held
    }

    private var inFlight: [String: Message] = [:]
    /// Messages completed lately, so a late duplicate part does not start (and finish) them again.
    private var done: [(id: String, at: C.Instant)] = []

    public init() {}

    /// Messages waiting for parts.
    public var pending: Int { inFlight.count }

    /// The whole payload once the last part of its message has come; nil otherwise.
    public mutating func add(_ chunk: String, at now: C.Instant) -> [UInt8]? {
        expire(at: now)
        guard let part = ChunkPart(chunk) else {
            dropped += 1
            return nil
        }
        if done.contains(where: { $0.id == part.id }) { return nil }
        var message = inFlight[part.id] ?? newMessage(at: now)
        if let total = part.total {
            guard message.total == nil || message.total == total else {
                dropped += 1
                return nil
            }
            message.total = total
            // Kept while the total was unknown, they cannot belong to a message this short.
            for index in message.parts.keys where index > total {
                message.size -= message.parts.removeValue(forKey: index)?.utf8.count ?? 0
                dropped += 1
            }
        } else if let total = message.total, part.index > total {
            dropped += 1
            return nil
        }
        // A duplicate adds nothing, but its total may be the one that completes the message.
        if message.parts[part.index] == nil {
            guard message.size + part.base64.utf8.count <= ChunkLimits.maxBase64 else {
                inFlight[part.id] = nil
                dropped += 1
                discarded += 1
                return nil
            }
            message.parts[part.index] = part.base64
            message.size += part.base64.utf8.count
        }
        guard let total = message.total, message.parts.count == total else {
            inFlight[part.id] = message
            return nil
        }
        inFlight[part.id] = nil
        remember(part.id, at: now)
        let joined = (1...total).map { message.parts[$0] ?? "" }.joined()
        guard let bytes = Data(base64Encoded: joined) else {
            discarded += 1
            return nil
        }
        return Array(bytes)
    }

    /// Gives up the messages whose first part came `ChunkLimits.lifetime` ago or more.
    public mutating func expire(at now: C.Instant) {
        let alive = { (m: Message) in m.first.duration(to: now) < ChunkLimits.lifetime }
        if !inFlight.values.allSatisfy(alive) {
            let before = inFlight.count
            inFlight = inFlight.filter { alive($0.value) }
            discarded += before - inFlight.count
        }
        done.removeAll { $0.at.duration(to: now) >= ChunkLimits.lifetime }
    }

    private mutating func newMessage(at now: C.Instant) -> Message {
        if inFlight.count >= ChunkLimits.maxMessages,
            let oldest = inFlight.min(by: { $0.value.first < $1.value.first })?.key
        {
            inFlight[oldest] = nil
            discarded += 1
        }
        return Message(first: now)
    }

    private mutating func remember(_ id: String, at now: C.Instant) {
        if done.count >= ChunkLimits.maxMessages * 4 { done.removeFirst() }
        done.append((id, now))
    }
}

/// The bounds (generic types cannot hold static stored properties).
public enum ChunkLimits {
    public static let lifetime: Duration = .seconds(5)
    public static let maxParts = 1000
    public static let maxMessages = 64
    /// 1 MiB once decoded.
    static let maxBase64 = (1 << 20) / 3 * 4 + 4
    static let maxID = 64
}

/// One chunk, checked: a part that fails here is dropped.
struct ChunkPart {
    var id: String
    var index: Int
    var total: Int?
    var base64: String

    init?(_ chunk: String) {
        let fields = chunk.split(separator: "|", maxSplits: 4, omittingEmptySubsequences: false)
        guard fields.count == 4, !fields[0].isEmpty, fields[0].utf8.count <= ChunkLimits.maxID,
            let index = Self.number(fields[1]), index >= 1, index <= ChunkLimits.maxParts
        else { return nil }
        if fields[2] == "???" {
            total = nil
        } else {
            guard let total = Self.number(fields[2]), total >= 1, total <= ChunkLimits.maxParts, index <= total
            else { return nil }
            self.total = total
        }
        guard fields[3].utf8.allSatisfy(Self.isBase64) else { return nil }
        id = String(fields[0])
        self.index = index
        base64 = String(fields[3])
    }

    /// Digits only (no sign, no spaces), and few enough not to overflow.
    private static func number(_ field: Substring) -> Int? {
        guard !field.isEmpty, field.utf8.count <= 6, field.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else {
            return nil
        }
        return Int(field)
    }

    private static func isBase64(_ c: UInt8) -> Bool {
        switch c {
        case 0x41...0x5A, 0x61...0x7A, 0x30...0x39, 0x2B, 0x2F, 0x3D: return true
        default: return false
        }
    }
}
