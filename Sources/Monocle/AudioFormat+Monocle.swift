// SPDX-License-Identifier: GPL-2.0-or-later
import Glasses

extension AudioFormat {
    /// As ast: and ist: name it: `KHZ,BITS` (8 or 16 each), or `KHZ,8,mulaw` for µ-law codes.
    public var monocleText: String {
        "\(sampleRate / 1000),\(bits)" + (isMuLaw ? ",mulaw" : "")
    }

    /// nil for anything the scripts would not send; empty is Noa's (and older scripts') 8 kHz 8-bit.
    public init?(monocleText text: String) {
        if text.isEmpty {
            self = .monocle
            return
        }
        let fields = text.split(separator: ",", omittingEmptySubsequences: false)
        guard fields.count == 2 || fields.count == 3, let khz = Int(fields[0]), khz == 8 || khz == 16,
            let bits = Int(fields[1]), bits == 8 || bits == 16
        else { return nil }
        if fields.count == 3 {
            guard fields[2] == "mulaw", bits == 8 else { return nil }
            self.init(sampleRate: khz * 1000, bits: 8, codec: .muLaw)
        } else {
            self.init(sampleRate: khz * 1000, bits: bits)
        }
    }
}
