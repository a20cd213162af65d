// SPDX-License-Identifier: GPL-2.0-or-later

extension WAV {
    /// A RIFF/WAVE file's 16-bit PCM samples (the first channel of several) and its rate; chunks
    /// other than fmt and data are skipped.
    public static func decode(_ bytes: [UInt8]) throws(AudioError) -> (samples: [Int16], sampleRate: Int) {
        func u16(_ at: Int) -> Int { Int(bytes[at]) | Int(bytes[at + 1]) << 8 }
        func u32(_ at: Int) -> Int { u16(at) | u16(at + 2) << 16 }
        guard bytes.count >= 12, bytes[0..<4].elementsEqual("RIFF".utf8), bytes[8..<12].elementsEqual("WAVE".utf8)
        else { throw .unsupportedInput("not a WAV file") }
        var at = 12
        var format: (rate: Int, channels: Int)?
        while at + 8 <= bytes.count {
            let size = min(u32(at + 4), bytes.count - at - 8)
            if bytes[at..<at + 4].elementsEqual("fmt ".utf8), size >= 16 {
                guard u16(at + 8) == 1, u16(at + 22) == 16, u16(at + 10) >= 1 else {
                    throw .unsupportedInput("a WAV file that is not 16-bit PCM")
                }
                format = (u32(at + 12), u16(at + 10))
            } else if bytes[at..<at + 4].elementsEqual("data".utf8) {
                guard let format, format.rate > 0 else { throw .unsupportedInput("a WAV file without its format first") }
                let frame = 2 * format.channels
                var samples: [Int16] = []
                samples.reserveCapacity(size / frame)
                var i = at + 8
                while i + frame <= at + 8 + size {
                    samples.append(Int16(bitPattern: UInt16(truncatingIfNeeded: u16(i))))
                    i += frame
                }
                return (samples, format.rate)
            }
            at += 8 + size + size % 2
        }
        throw .unsupportedInput("a WAV file without data")
    }
}
