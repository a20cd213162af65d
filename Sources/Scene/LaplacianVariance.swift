// SPDX-License-Identifier: GPL-2.0-or-later

extension GrayImage {
    /// The variance of the 3x3 Laplacian [0 1 0; 1 -4 1; 0 1 0] over the interior pixels (OpenCV's
    /// `cv2.Laplacian(gray, CV_64F).var()` without its border): the `blurry` measure. Edges make it
    /// large, blur makes it small. 0 for an image with no interior (narrower or shorter than 3).
    public func laplacianVariance() -> Double {
        guard width >= 3, height >= 3 else { return 0 }
        // Exact integer sums (|L| <= 1020, so ΣL² fits easily), one conversion at the end.
        var sum = 0, squares = 0
        pixels.withUnsafeBufferPointer { p in
            for y in 1..<(height - 1) {
                var i = y * width + 1
                for _ in 1..<(width - 1) {
                    let l = Int(p[i - width]) + Int(p[i + width]) + Int(p[i - 1]) + Int(p[i + 1]) - 4 * Int(p[i])
                    sum += l
                    squares += l * l
                    i += 1
                }
            }
        }
        let n = Double((width - 2) * (height - 2))
        let mean = Double(sum) / n
        return Double(squares) / n - mean * mean
    }
}
