// SPDX-License-Identifier: GPL-2.0-or-later
import Concurrency

/// A `multipart/form-data` body (RFC 7578): text fields, then files, each part opened by the
/// boundary line and the whole closed by `--boundary--`.
struct MultipartBody: Sendable {
    enum Part: Sendable {
        case field(name: String, value: String)
        case file(name: String, filename: String, contentType: String, bytes: [UInt8])

        var content: [UInt8] {
            switch self {
            case .field(_, let value): Array(value.utf8)
            case .file(_, _, _, let bytes): bytes
            }
        }
    }

    let boundary: String
    let bytes: [UInt8]

    /// The value of the request's `Content-Type` header.
    var contentType: String { "multipart/form-data; boundary=\(boundary)" }

    init(_ parts: [Part]) {
        let contents = parts.map(\.content)
        boundary = Self.boundary(avoiding: contents, seed: Self.hash(contents))
        var out: [UInt8] = []
        out.reserveCapacity(contents.reduce(0) { $0 + $1.count + 128 } + boundary.utf8.count)
        for (part, content) in zip(parts, contents) {
            out.append(contentsOf: "--\(boundary)\r\n".utf8)
            switch part {
            case .field(let name, _):
                out.append(contentsOf: "Content-Disposition: form-data; name=\"\(Self.quoted(name))\"\r\n".utf8)
            case .file(let name, let filename, let type, _):
                out.append(
                    contentsOf: ("Content-Disposition: form-data; name=\"\(Self.quoted(name))\"; "
                        + "filename=\"\(Self.quoted(filename))\"\r\nContent-Type: \(type)\r\n").utf8)
            }
            out.append(contentsOf: "\r\n".utf8)
            out.append(contentsOf: content)
            out.append(contentsOf: "\r\n".utf8)
        }
        out.append(contentsOf: "--\(boundary)--\r\n".utf8)
        bytes = out
    }

    /// The first candidate from `seed` that occurs in no content, so no part can end early.
    /// Deterministic: the same body always gets the same boundary.
    static func boundary(avoiding contents: [[UInt8]], seed: UInt64) -> String {
        var salt: UInt64 = 0
        while true {
            let candidate = self.candidate(seed: seed, salt: salt)
            let needle = Array(candidate.utf8)
            if !contents.contains(where: { contains($0, needle) }) { return candidate }
            salt += 1
        }
    }

    static func candidate(seed: UInt64, salt: UInt64) -> String {
        // Neighbouring salts give unrelated-looking boundaries.
        let z = SplitMix64.mix(seed &+ salt &* SplitMix64.golden)
        let hex = String(z, radix: 16)
        return "glassd-" + String(repeating: "0", count: 16 - hex.count) + hex
    }

    /// FNV-1a over every content, so the boundary depends on the request and nothing else.
    static func hash(_ contents: [[UInt8]]) -> UInt64 {
        var h: UInt64 = 0xCBF2_9CE4_8422_2325
        for content in contents {
            content.withUnsafeBufferPointer { bytes in
                for byte in bytes { h = (h ^ UInt64(byte)) &* 0x100_0000_01B3 }
            }
            h = (h ^ 0xFF) &* 0x100_0000_01B3  // part separator: ["ab"] and ["a","b"] differ
        }
        return h
    }

    static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard let first = needle.first, haystack.count >= needle.count else { return false }
        return haystack.withUnsafeBufferPointer { hay in
            needle.withUnsafeBufferPointer { pin in
                var i = 0
                let last = hay.count - pin.count
                while i <= last {
                    if hay[i] == first && memEqual(hay, at: i, pin) { return true }
                    i += 1
                }
                return false
            }
        }
    }

    private static func memEqual(_ hay: UnsafeBufferPointer<UInt8>, at start: Int, _ pin: UnsafeBufferPointer<UInt8>)
        -> Bool
    {
        for j in 1..<pin.count where hay[start + j] != pin[j] { return false }
        return true
    }

    /// Names go inside quotes in a header: escape what would end the quote or the line, as
    /// browsers do (WHATWG "multipart/form-data encoding algorithm").
    private static func quoted(_ name: String) -> String {
        var out = ""
        for scalar in name.unicodeScalars {
            switch scalar {
            case "\"": out += "%22"
            case "\r": out += "%0D"
            case "\n": out += "%0A"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}
