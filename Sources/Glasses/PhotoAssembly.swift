// SPDX-License-Identifier: GPL-2.0-or-later

/// Collects a photo's pieces (a scene frame, a question's photo), with a bound: glasses that
/// send too much cannot make the host hold it.
public struct PhotoAssembly: Sendable {
    /// A frame larger than this is not a photo from the glasses (theirs are 20–200 KB).
    public static let maxBytes = 1 << 20

    private var bytes: [UInt8]?
    private var tooLarge = false

    public init() {}

    public var collecting: Bool { bytes != nil }

    public mutating func start() {
        bytes = []
        tooLarge = false
    }

    public mutating func append(_ piece: [UInt8]) {
        guard bytes != nil, !tooLarge else { return }
        if bytes!.count + piece.count > Self.maxBytes {
            tooLarge = true
            bytes = []
        } else {
            bytes! += piece
        }
    }

    /// Drops what was collected (a question took over).
    public mutating func abandon() { bytes = nil }

    /// The frame (nil inside: too large); nil when none was being collected.
    public mutating func finish() -> [UInt8]?? {
        guard let done = bytes else { return nil }
        bytes = nil
        return .some(tooLarge ? nil : done)
    }
}
