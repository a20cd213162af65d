// SPDX-License-Identifier: GPL-2.0-or-later

/// A desktop notification as glassd keeps it (Manager1.Notify).
public struct DesktopNotification: Sendable, Equatable {
    public enum Urgency: UInt8, Sendable, Comparable {
        case low, normal, critical

        public static func < (a: Urgency, b: Urgency) -> Bool { a.rawValue < b.rawValue }
    }

    /// What became of it.
    public enum State: String, Sendable {
        /// Not on the glasses yet.
        case waiting
        /// It was on the glasses.
        case shown
        /// The desktop closed it.
        case closed
        /// Dismissed over D-Bus.
        case dismissed
        /// It waited past its expiry.
        case expired
        /// Too many waited.
        case dropped
    }

    /// What a caller sends.
    public struct Fields: Sendable, Equatable {
        public var appName: String
        public var summary: String
        public var body: String
        public var urgency: Urgency
        public var category: String
        /// The desktop's id of it (0: none), for closing and replacing.
        public var desktopID: UInt32
        /// How long it may wait to show; nil: the default (a critical one: until it is closed).
        public var wait: Duration?

        public init(
            appName: String = "", summary: String, body: String = "", urgency: Urgency = .normal, category: String = "",
            desktopID: UInt32 = 0, wait: Duration? = nil
        ) {
            self.appName = appName
            self.summary = summary
            self.body = body
            self.urgency = urgency
            self.category = category
            self.desktopID = desktopID
            self.wait = wait
        }
    }

    public let id: UInt32
    /// Unix milliseconds it arrived (or was last replaced).
    public var arrived: Int64
    public var fields: Fields
    /// Who forwarded it (a bus name): desktop ids are the forwarder's own.
    public var sender: String
    public var state: State
}

/// The notifications glassd keeps, newest last and at most `capacity` (the oldest go first):
/// what Manager1.Notifications lists and the glance counts. Pure: the display is the desk's.
public struct NotificationBook: Sendable {
    public let capacity: Int
    public private(set) var kept: [DesktopNotification] = []
    private var lastID: UInt32 = 0

    public init(capacity: Int = 100) {
        precondition(capacity > 0)
        self.capacity = capacity
    }

    /// Keeps `fields` from `sender`; the same sender's same desktop id replaces its notification
    /// (and it is unread again). Returns its id and whether it replaced one.
    public mutating func add(_ fields: DesktopNotification.Fields, from sender: String, at unixMS: Int64) -> (id: UInt32, replaced: Bool) {
        if fields.desktopID != 0, let i = kept.lastIndex(where: { $0.sender == sender && $0.fields.desktopID == fields.desktopID }) {
            kept[i].fields = fields
            kept[i].arrived = unixMS
            kept[i].state = .waiting
            return (kept[i].id, true)
        }
        lastID = lastID == UInt32.max ? 1 : lastID + 1
        kept.append(DesktopNotification(id: lastID, arrived: unixMS, fields: fields, sender: sender, state: .waiting))
        if kept.count > capacity { kept.removeFirst(kept.count - capacity) }
        return (lastID, false)
    }

    /// The id of `sender`'s notification with this desktop id, if kept.
    public func id(desktopID: UInt32, from sender: String) -> UInt32? {
        guard desktopID != 0 else { return nil }
        return kept.last { $0.sender == sender && $0.fields.desktopID == desktopID }?.id
    }

    public func notification(_ id: UInt32) -> DesktopNotification? { kept.first { $0.id == id } }

    public mutating func set(_ id: UInt32, _ state: DesktopNotification.State) {
        guard let i = kept.firstIndex(where: { $0.id == id }) else { return }
        kept[i].state = state
    }

    /// Those still waiting to show, oldest first.
    public var waiting: [DesktopNotification] { kept.filter { $0.state == .waiting } }

    /// Those neither closed on the desktop nor dismissed (shown or not: a notification on the
    /// glasses for a few seconds may well have been missed), oldest first.
    public var unread: [DesktopNotification] { kept.filter { $0.state != .closed && $0.state != .dismissed } }

    /// The newest first, at most `limit` (0: all).
    public func newest(_ limit: Int) -> [DesktopNotification] {
        let all = kept.reversed()
        return limit > 0 ? Array(all.prefix(limit)) : Array(all)
    }
}

/// A notification's text as the glasses get it: the desktop's body markup as plain text.
public enum NotificationText {
    /// Tags out (`<b>`, `<a href=…>`, `<img …/>`), the five XML entities and numeric ones in,
    /// white space runs as one space.
    public static func plain(_ markup: String) -> String {
        var out = ""
        var inTag = false
        for character in markup {
            if inTag {
                if character == ">" { inTag = false }
            } else if character == "<" {
                inTag = true
            } else {
                out.append(character)
            }
        }
        return entitiesDecoded(out).split(whereSeparator: \.isWhitespace).joined(separator: " ")
    }

    private static let named: [String: Character] = ["amp": "&", "lt": "<", "gt": ">", "quot": "\"", "apos": "'"]

    private static func entitiesDecoded(_ text: String) -> String {
        guard text.contains("&") else { return text }
        var out = ""
        var rest = Substring(text)
        while let amp = rest.firstIndex(of: "&") {
            out += rest[..<amp]
            let after = rest[rest.index(after: amp)...]
            if let semi = after.prefix(10).firstIndex(of: ";"), let character = entity(after[..<semi]) {
                out.append(character)
                rest = after[after.index(after: semi)...]
            } else {
                out.append("&")
                rest = after
            }
        }
        return out + rest
    }

    private static func entity(_ name: Substring) -> Character? {
        if let named = named[String(name)] { return named }
        guard name.first == "#" else { return nil }
        let digits = name.dropFirst()
        let value = digits.first == "x" || digits.first == "X" ? UInt32(digits.dropFirst(), radix: 16) : UInt32(digits)
        return value.flatMap(Unicode.Scalar.init).map(Character.init)
    }
}
