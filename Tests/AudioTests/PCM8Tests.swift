// SPDX-License-Identifier: GPL-2.0-or-later
import Audio
import Testing

@Suite("8-bit to 16-bit", .timeLimit(.minutes(5)))
struct PCM8Tests {
    @Test("each byte is a two's-complement high byte")
    func widen() {
        let bytes: [UInt8] = [0x80, 0xFF, 0x00, 0x01, 0x7F]  // -128, -1, 0, 1, 127
        #expect(PCM8.widen(bytes) == [-32768, -256, 0, 256, 32512])
        #expect(PCM8.widen([UInt8]()) == [])
    }

    @Test("all 256 values, in order")
    func all() {
        let wide = PCM8.widen((0...255).map(UInt8.init))
        for (byte, sample) in wide.enumerated() {
            #expect(Int(sample) == Int(Int8(bitPattern: UInt8(byte))) * 256)
        }
    }
}
