// SPDX-License-Identifier: GPL-2.0-or-later

/// A 64-bit difference hash (imagehash's `dhash`): the image area-averaged to 9 wide x 8 high, one
/// bit per horizontally adjacent pair, set when the right one is brighter. Row-major, the top-left
/// pair in the most significant bit (as imagehash prints it). Similar views differ in few bits.
public struct DHash: Sendable, Hashable, CustomStringConvertible {
    public let bits: UInt64

    public init(bits: UInt64) { self.bits = bits }

    /// How many of the 64 bits differ: the `unchanged` measure.
    public func distance(to other: DHash) -> Int { (bits ^ other.bits).nonzeroBitCount }

    public var description: String {
        let hex = String(bits, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }
}

extension GrayImage {
    public func dHash() -> DHash {
        let columns = areaWeights(from: width, to: 9), rows = areaWeights(from: height, to: 8)
        // Each cell's weights add up to width x height whatever its size, so comparing the weighted
        // sums compares the averages exactly: no division, no rounding.
        var cells = [Int](repeating: 0, count: 9 * 8)
        var rowSums = [Int](repeating: 0, count: 9)
        pixels.withUnsafeBufferPointer { p in
            for (cy, row) in rows.enumerated() {
                for (sy, wy) in row {
                    let start = sy * width
                    for (cx, column) in columns.enumerated() {
                        var sum = 0
                        for (sx, wx) in column { sum += wx * Int(p[start + sx]) }
                        rowSums[cx] = sum
                    }
                    for cx in 0..<9 { cells[cy * 9 + cx] += wy * rowSums[cx] }
                }
            }
        }
        var bits: UInt64 = 0
        for y in 0..<8 {
            for x in 0..<8 { bits = bits << 1 | (cells[y * 9 + x + 1] > cells[y * 9 + x] ? 1 : 0) }
        }
        return DHash(bits: bits)
    }
}

/// Box (area) resampling of `count` pixels into `cells`: for each cell, the source pixels it
/// covers and by how much, in units of 1/cells of a pixel, so every cell's weights add up to `count`.
/// Works both ways: a cell may cover many pixels or part of one.
private func areaWeights(from count: Int, to cells: Int) -> [[(index: Int, weight: Int)]] {
    (0..<cells).map { cell in
        // In units of 1/cells pixel: the cell spans [cell * count, (cell + 1) * count),
        // source pixel s spans [s * cells, (s + 1) * cells).
        let lo = cell * count, hi = (cell + 1) * count
        return (lo / cells...(hi - 1) / cells).map { s in
            (s, min(hi, (s + 1) * cells) - max(lo, s * cells))
        }
    }
}
