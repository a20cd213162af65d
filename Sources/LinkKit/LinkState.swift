// SPDX-License-Identifier: GPL-2.0-or-later

/// Where the link to the paired glasses stands.
public enum LinkState: String, Sendable {
    case unpaired, disconnected, connecting, connected
}
