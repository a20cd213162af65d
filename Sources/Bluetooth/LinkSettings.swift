// SPDX-License-Identifier: GPL-2.0-or-later
import Glasses
import LinkKit

/// How the link supervisor finds and keeps the glasses.
public struct LinkSettings: Sendable {
    /// "hci0"; nil: the first powered adapter.
    public var adapter: String?
    /// How long Pair("") and Pair(address) look for the glasses.
    public var scanTimeout: Duration
    /// How long to keep scanning after the first glasses are seen, for stronger ones.
    public var scanSettle: Duration
    /// Connect and service resolution, each (the glasses may be rebooting).
    public var connectTimeout: Duration
    public var reconnect: ReconnectPolicy
    /// Use AcquireNotify/AcquireWrite sockets where BlueZ offers them (else D-Bus messages).
    public var acquireSockets: Bool
    /// The kinds of glasses looked for, and what a link opens on each.
    public var kinds: [GlassesKind]

    public init(
        adapter: String? = nil, scanTimeout: Duration = .seconds(10), scanSettle: Duration = .seconds(2),
        connectTimeout: Duration = .seconds(30), reconnect: ReconnectPolicy = ReconnectPolicy(),
        acquireSockets: Bool = true, kinds: [GlassesKind]
    ) {
        self.kinds = kinds
        self.acquireSockets = acquireSockets
        self.adapter = adapter
        self.scanTimeout = scanTimeout
        self.scanSettle = scanSettle
        self.connectTimeout = connectTimeout
        self.reconnect = reconnect
    }
}
