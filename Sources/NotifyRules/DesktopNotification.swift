// SPDX-License-Identifier: GPL-2.0-or-later

/// How urgent the desktop says a notification is (its hints' "urgency").
public enum Urgency: UInt8, Sendable, Comparable, CaseIterable, CustomStringConvertible {
    case low = 0, normal = 1, critical = 2

    public static func < (a: Urgency, b: Urgency) -> Bool { a.rawValue < b.rawValue }

    /// As notify.toml spells it.
    public init?(name: String) {
        guard let urgency = Self.allCases.first(where: { $0.description == name }) else { return nil }
        self = urgency
    }

    public var description: String {
        switch self {
        case .low: "low"
        case .normal: "normal"
        case .critical: "critical"
        }
    }
}

/// One notification as an application sent it to the desktop's notification daemon
/// (org.freedesktop.Notifications.Notify), with what the rules look at.
public struct DesktopNotification: Sendable, Equatable {
    public var appName: String
    public var summary: String
    public var body: String
    public var urgency: Urgency
    /// The hints' "category" (e.g. email.arrived); nil when none.
    public var category: String?
    /// Not 0: the desktop's id of the notification this one replaces.
    public var replacesID: UInt32
    /// In ms as the sender gave it: -1 the desktop's default, 0 never.
    public var expireTimeout: Int32

    public init(
        appName: String, summary: String, body: String = "", urgency: Urgency = .normal, category: String? = nil,
        replacesID: UInt32 = 0, expireTimeout: Int32 = -1
    ) {
        self.appName = appName
        self.summary = summary
        self.body = body
        self.urgency = urgency
        self.category = category
        self.replacesID = replacesID
        self.expireTimeout = expireTimeout
    }
}
