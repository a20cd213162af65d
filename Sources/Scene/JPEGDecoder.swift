// SPDX-License-Identifier: GPL-2.0-or-later
import CTurboJPEG

/// libjpeg-turbo's decompressor, straight to 8-bit grayscale (TJPF_GRAY: the luma plane only, the
/// chroma never converted), scaled down in the IDCT when the frame is wider or taller than the
/// decoder's bounds. One TurboJPEG handle, which is not thread-safe: one decoder per task.
///
/// The default bounds, 640x640, decode the Monocle's 640x400 frames at full size: the blur
/// threshold (Laplacian variance 100) is the usual one for full-size 8-bit images and would have to
/// be re-tuned for a smaller one (at half size the blurred fixture measures 12.8, not 2.3), and a
/// smaller decode saves little (most of the time is entropy decoding, done at any scale): the
/// full-size decode and the three measures take under a millisecond (Scripts/bench-scene).
public final class JPEGDecoder {
    /// The largest side a source may have: bounds what libjpeg allocates for a progressive image
    /// (its whole coefficient buffer) whatever a damaged header claims.
    public static let largestSource = 4096

    public let maxWidth: Int
    public let maxHeight: Int
    /// Fail on libjpeg's warnings (truncated or corrupt data it would decode anyway, the rest gray).
    public let strict: Bool
    /// Dropped after any failure: TurboJPEG 2.x can leave a handle unusable after an error
    /// (tjDecompressHeader3 does not reset libjpeg's state, so every later frame failed with the
    /// same message), so the next frame gets a fresh one.
    private var handle: tjhandle?
    /// The downscaling factors libjpeg-turbo offers (numerator/denominator <= 1), largest first.
    private let factors: [tjscalingfactor]

    public init(maxWidth: Int = 640, maxHeight: Int = 640, strict: Bool = true) throws(JPEGError) {
        var count: Int32 = 0
        let list = tjGetScalingFactors(&count)
        let all = list.map { Array(UnsafeBufferPointer(start: $0, count: Int(max(0, count)))) } ?? []
        self.factors = all.filter { $0.num > 0 && $0.num <= $0.denom }
            .sorted { Double($0.num) / Double($0.denom) > Double($1.num) / Double($1.denom) }
        self.maxWidth = maxWidth
        self.maxHeight = maxHeight
        self.strict = strict
        self.handle = try Self.makeHandle()
    }

    deinit { if let handle { tjDestroy(handle) } }

    /// The frame as grayscale, at the largest scale (1, 7/8, ... 1/8) that fits the decoder's bounds.
    public func decode(_ jpeg: [UInt8]) throws(JPEGError) -> GrayImage {
        let handle: tjhandle
        if let current = self.handle { handle = current } else { handle = try Self.makeHandle() }
        self.handle = handle
        do throws(JPEGError) {
            return try decode(jpeg, with: handle)
        } catch {
            tjDestroy(handle)
            self.handle = nil
            throw error
        }
    }

    private func decode(_ jpeg: [UInt8], with handle: tjhandle) throws(JPEGError) -> GrayImage {
        guard !jpeg.isEmpty else { throw .unreadable("no data") }
        var width: Int32 = 0, height: Int32 = 0, subsampling: Int32 = 0, colorspace: Int32 = 0
        let header = jpeg.withUnsafeBufferPointer {
            tjDecompressHeader3(handle, $0.baseAddress, UInt($0.count), &width, &height, &subsampling, &colorspace)
        }
        guard header == 0 else { throw .unreadable(Self.message(handle)) }
        // A tables-only stream (no frame header) reads without error and no size.
        guard width > 0, height > 0 else { throw .unreadable("no image in the data") }
        guard width <= Self.largestSource, height <= Self.largestSource,
            let factor = factors.first(where: {
                ctj_scaled(width, $0) <= maxWidth && ctj_scaled(height, $0) <= maxHeight
            })
        else { throw .tooLarge(width: Int(width), height: Int(height)) }

        let w = ctj_scaled(width, factor), h = ctj_scaled(height, factor)
        var pixels = [UInt8](repeating: 0, count: Int(w) * Int(h))
        // LIMITSCANS: a progressive image of thousands of scans is an attack on the decoder, not a frame.
        let flags = TJFLAG_LIMITSCANS | (strict ? TJFLAG_STOPONWARNING : 0)
        let result = jpeg.withUnsafeBufferPointer { source in
            pixels.withUnsafeMutableBufferPointer { target in
                // Asking for exactly (w, h) makes libjpeg-turbo pick the same factor.
                tjDecompress2(
                    handle, source.baseAddress, UInt(source.count), target.baseAddress, w, w, h,
                    Int32(TJPF_GRAY.rawValue), flags)
            }
        }
        if result != 0, strict || tjGetErrorCode(handle) != TJERR_WARNING.rawValue {
            throw .corrupt(Self.message(handle))
        }
        return GrayImage(width: Int(w), height: Int(h), pixels: pixels)
    }

    private static func makeHandle() throws(JPEGError) -> tjhandle {
        guard let handle = tjInitDecompress() else { throw .decoderInit(String(cString: tjGetErrorStr2(nil))) }
        return handle
    }

    private static func message(_ handle: tjhandle) -> String { String(cString: tjGetErrorStr2(handle)) }
}
