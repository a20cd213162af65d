// SPDX-License-Identifier: GPL-2.0-or-later

extension CBOR {
    /// The nesting the decoder allows by default: SMP's deepest answer (image state: map, list,
    /// map) is three levels; 16 leaves room and still bounds the recursion on hostile input.
    public static let defaultMaxDepth = 16

    /// Decodes exactly one item filling `bytes`. Definite and indefinite lengths are accepted;
    /// every declared length is checked against the bytes left before anything is allocated, so
    /// no input (from the glasses or a file) can trap or make a huge allocation.
    public static func decode(_ bytes: [UInt8], maxDepth: Int = defaultMaxDepth) throws(CBORError) -> CBOR {
        var reader = Reader(bytes: bytes, maxDepth: maxDepth)
        let item = try reader.item(depth: 0)
        guard reader.position == bytes.count else { throw .trailingBytes(at: reader.position) }
        return item
    }
}

/// A cursor over the input; each method throws at the first byte that cannot be right.
private struct Reader {
    let bytes: [UInt8]
    let maxDepth: Int
    var position = 0

    init(bytes: [UInt8], maxDepth: Int) {
        self.bytes = bytes
        self.maxDepth = maxDepth
    }

    var remaining: Int { bytes.count - position }

    mutating func item(depth: Int) throws(CBORError) -> CBOR {
        let start = position
        let initial = try byte()
        let major = initial >> 5
        let info = initial & 0x1f
        if major == 7 { return try simpleOrFloat(info, start: start) }
        if info == 31 { return try indefinite(major, start: start, depth: depth) }
        let argument = try argument(info, start: start)
        switch major {
        case 0: return .unsigned(argument)
        case 1: return .negative(argument)
        case 2: return .bytes(try take(argument, start: start))
        case 3: return .text(try text(try take(argument, start: start), at: start))
        case 4:
            // Each item takes at least a byte: a count past the bytes left is a lie.
            try check(count: argument, bytesEach: 1, start: start, depth: depth)
            var items: [CBOR] = []
            items.reserveCapacity(Int(argument))
            for _ in 0..<argument { items.append(try item(depth: depth + 1)) }
            return .array(items)
        case 5:
            try check(count: argument, bytesEach: 2, start: start, depth: depth)
            var pairs: [CBOR.Pair] = []
            pairs.reserveCapacity(Int(argument))
            for _ in 0..<argument {
                let key = try item(depth: depth + 1)
                pairs.append(CBOR.Pair(key, try item(depth: depth + 1)))
            }
            return .map(pairs)
        default:
            // A tag: SMP gives none a meaning, so the item it wraps stands for it.
            guard depth < maxDepth else { throw .tooDeep(limit: maxDepth) }
            return try item(depth: depth + 1)
        }
    }

    private mutating func indefinite(_ major: UInt8, start: Int, depth: Int) throws(CBORError) -> CBOR {
        switch major {
        case 2, 3:
            var joined: [UInt8] = []
            while try !atBreak() {
                let chunkStart = position
                let head = try byte()
                guard head >> 5 == major, head & 0x1f != 31 else { throw .badChunk(at: chunkStart) }
                let chunk = try take(try argument(head & 0x1f, start: chunkStart), start: chunkStart)
                // RFC 8949 §3.2.3: each text chunk is valid UTF-8 on its own.
                if major == 3 { _ = try text(chunk, at: chunkStart) }
                joined += chunk
            }
            return major == 2 ? .bytes(joined) : .text(try text(joined, at: start))
        case 4:
            guard depth < maxDepth else { throw .tooDeep(limit: maxDepth) }
            var items: [CBOR] = []
            while try !atBreak() { items.append(try item(depth: depth + 1)) }
            return .array(items)
        case 5:
            guard depth < maxDepth else { throw .tooDeep(limit: maxDepth) }
            var pairs: [CBOR.Pair] = []
            while try !atBreak() {
                let key = try item(depth: depth + 1)
                pairs.append(CBOR.Pair(key, try item(depth: depth + 1)))
            }
            return .map(pairs)
        default:
            throw .malformedHead(at: start)  // integers and tags have no indefinite form
        }
    }

    private mutating func simpleOrFloat(_ info: UInt8, start: Int) throws(CBORError) -> CBOR {
        switch info {
        case 20: return .bool(false)
        case 21: return .bool(true)
        case 22: return .null
        case 23: return .undefined
        case 24: throw .unsupportedSimple(at: start, value: try byte())
        case 25: return .float(Self.half(UInt16(try bigEndian(2))))
        case 26: return .float(Double(Float(bitPattern: UInt32(try bigEndian(4)))))
        case 27: return .float(Double(bitPattern: try bigEndian(8)))
        case 28...30: throw .malformedHead(at: start)
        case 31: throw .unexpectedBreak(at: start)
        default: throw .unsupportedSimple(at: start, value: info)
        }
    }

    /// IEEE 754 half precision (RFC 8949 Appendix D).
    private static func half(_ bits: UInt16) -> Double {
        let exponent = Int(bits >> 10) & 0x1f
        let mantissa = Double(bits & 0x3ff)
        let magnitude: Double =
            switch exponent {
            case 0: Double(sign: .plus, exponent: -24, significand: mantissa)
            case 31: mantissa == 0 ? .infinity : .nan
            default: Double(sign: .plus, exponent: exponent - 25, significand: mantissa + 1024)
            }
        return bits & 0x8000 != 0 ? -magnitude : magnitude
    }

    // MARK: Bytes

    private func check(count: UInt64, bytesEach: UInt64, start: Int, depth: Int) throws(CBORError) {
        guard count <= UInt64(remaining) / bytesEach else {
            throw .lengthPastEnd(at: start, declared: count, remaining: remaining)
        }
        guard depth < maxDepth else { throw .tooDeep(limit: maxDepth) }
    }

    private mutating func argument(_ info: UInt8, start: Int) throws(CBORError) -> UInt64 {
        switch info {
        case 0..<24: UInt64(info)
        case 24: UInt64(try byte())
        case 25: try bigEndian(2)
        case 26: try bigEndian(4)
        case 27: try bigEndian(8)
        default: throw .malformedHead(at: start)
        }
    }

    private mutating func byte() throws(CBORError) -> UInt8 {
        guard position < bytes.count else { throw .truncated(at: position) }
        defer { position += 1 }
        return bytes[position]
    }

    private mutating func bigEndian(_ count: Int) throws(CBORError) -> UInt64 {
        guard remaining >= count else { throw .truncated(at: bytes.count) }
        var value: UInt64 = 0
        for _ in 0..<count { value = value << 8 | UInt64(bytes[position]); position += 1 }
        return value
    }

    private mutating func take(_ count: UInt64, start: Int) throws(CBORError) -> [UInt8] {
        guard count <= UInt64(remaining) else {
            throw .lengthPastEnd(at: start, declared: count, remaining: remaining)
        }
        defer { position += Int(count) }
        return Array(bytes[position..<position + Int(count)])
    }

    /// Consumes a break byte if it is next; the input must not end before it.
    private mutating func atBreak() throws(CBORError) -> Bool {
        guard position < bytes.count else { throw .truncated(at: position) }
        guard bytes[position] == 0xff else { return false }
        position += 1
        return true
    }

    private func text(_ bytes: [UInt8], at offset: Int) throws(CBORError) -> String {
        guard let s = String(validating: bytes, as: UTF8.self) else { throw .invalidUTF8(at: offset) }
        return s
    }
}
