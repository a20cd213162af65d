// SPDX-License-Identifier: GPL-2.0-or-later

/// A whole message, its fragments joined.
public enum WebSocketMessage: Sendable, Equatable {
    case text(String)
    case binary([UInt8])
}
