// SPDX-License-Identifier: GPL-2.0-or-later

/// An 8-bit grayscale image, rows top to bottom, no padding: what every measure reads. The JPEG's
/// own luma (Y = 0.299 R + 0.587 G + 0.114 B), as libjpeg-turbo decodes it straight to gray.
public struct GrayImage: Sendable, Equatable {
    public let width: Int
    public let height: Int
    public let pixels: [UInt8]

    public init(width: Int, height: Int, pixels: [UInt8]) {
        precondition(width > 0 && height > 0 && pixels.count == width * height, "\(width)x\(height), \(pixels.count) pixels")
        self.width = width
        self.height = height
        self.pixels = pixels
    }

    /// An image whose pixel at (x, y) is `value(x, y)`, clamped to 0...255: for tests and benchmarks.
    public init(width: Int, height: Int, _ value: (_ x: Int, _ y: Int) -> Int) {
        var pixels = [UInt8](repeating: 0, count: width * height)
        for y in 0..<height {
            for x in 0..<width { pixels[y * width + x] = UInt8(clamping: value(x, y)) }
        }
        self.init(width: width, height: height, pixels: pixels)
    }

    public subscript(x: Int, y: Int) -> UInt8 { pixels[y * width + x] }
}
