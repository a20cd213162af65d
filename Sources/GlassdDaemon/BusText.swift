// SPDX-License-Identifier: GPL-2.0-or-later

extension String {
    /// The text as a D-Bus string can carry it: text from a server or the glasses may hold a NUL,
    /// which no D-Bus string can, so it is dropped rather than the whole message refused.
    var busSafe: String {
        utf8.contains(0) ? String(unicodeScalars.filter { $0 != "\0" }) : self
    }
}
