// SPDX-License-Identifier: GPL-2.0-or-later
import TOMLKit

/// `[display]`: how the glasses' display is shared (answers, alerts, notifications, the glance).
public struct DisplaySettings: Sendable, Equatable {
    /// At least this between two updates glassd makes, in ms (a burst does not flicker).
    public var minimumGapMS = 300
    /// How long a notification may wait for the display, unless it says, in seconds.
    public var notificationWaitSeconds = 60
    /// How many notifications glassd keeps for Notifications and the glance.
    public var notificationsKept = 100
    /// How long the glance stays, in seconds.
    public var glanceSeconds = 8

    public init() {}
}

extension Config {
    static func displaySettings(_ table: TOMLTable?, reader: Reader) throws(Error) -> DisplaySettings {
        var settings = DisplaySettings()
        settings.minimumGapMS = try reader.int(table, "display", "minimum_gap_ms", in: 0...10_000) ?? settings.minimumGapMS
        settings.notificationWaitSeconds =
            try reader.int(table, "display", "notification_wait_seconds", in: 1...86_400) ?? settings.notificationWaitSeconds
        settings.notificationsKept =
            try reader.int(table, "display", "notifications_kept", in: 1...10_000) ?? settings.notificationsKept
        settings.glanceSeconds = try reader.int(table, "display", "glance_seconds", in: 1...600) ?? settings.glanceSeconds
        return settings
    }
}
