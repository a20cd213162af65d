// SPDX-License-Identifier: GPL-2.0-or-later

/// A secret (an API key) that never shows itself: printing, dumping or reflecting any value that
/// holds one (a log line that describes a whole service, say) gives "[redacted]". Only `reveal`
/// reads it, where it is used.
public struct Secret: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    private let value: String

    public init(_ value: String) {
        self.value = value
    }

    public var reveal: String { value }
    public var description: String { "[redacted]" }
    public var debugDescription: String { "[redacted]" }
    public var customMirror: Mirror { Mirror(self, children: [:]) }
}
