// SPDX-License-Identifier: GPL-2.0-or-later

/// The D-Bus contract's names, in one place for the daemon and its clients (busctl users depend
/// on the exact spelling). The interfaces and their members are generated from dbus/*.xml
/// (`GlassdBus.Manager1` and the others, ContractPlugin); here is what the XML does not hold: the
/// bus name, the object paths, the polkit actions, the error names, and the short spellings.
public enum GlassdBus {
    public static let name = "org.glassd"
    public static let managerPath = "/org/glassd"
    public static let jobsPath = "/org/glassd/jobs"
    public static let devicesPath = "/org/glassd/devices"
    /// Agent sessions (a TEN agent talking through the glasses): /org/glassd/agents/N.
    public static let agentsPath = "/org/glassd/agents"

    /// The object path of the device with this address ("AA:BB:..." → ".../AA_BB_...").
    public static func devicePath(address: String) -> String {
        devicesPath + "/" + address.split(separator: ":").joined(separator: "_")
    }

    // The short spellings code has always used, for the generated names.
    public static let managerInterface = Manager1.interface
    public typealias Method = Manager1.Method
    public typealias Property = Manager1.Property
    public typealias Signal = Manager1.Signal
    public static let deviceInterface = Device1.interface
    public typealias DeviceProperty = Device1.Property
    public typealias DeviceMethod = Device1.Method
    public static let jobInterface = Job1.interface
    public typealias Job = Job1.Member
    public static let agentInterface = AgentSession1.interface
    public typealias Agent = AgentSession1.Member

    /// The polkit actions (dbus/org.glassd.policy) and the calls each one covers on the system bus.
    public enum Action {
        public static let pair = "org.glassd.pair"
        public static let update = "org.glassd.update"
        public static let manage = "org.glassd.manage"
        /// Forwarding desktop notifications (and the glance): a user's notify-agent needs no more.
        public static let notify = "org.glassd.notify"

        /// (interface, method or written property, whether it is a property write, action).
        public static let calls: [(interface: String, member: String, propertyWrite: Bool, action: String)] = [
            (managerInterface, Method.pair, false, pair),
            (managerInterface, Method.unpair, false, pair),
            (managerInterface, Method.update, false, update),
            (jobInterface, Job.cancel, false, update),
            (managerInterface, Property.mode, true, manage),
            (managerInterface, Method.clearHistory, false, manage),
            (managerInterface, Method.importHistory, false, manage),
            (deviceInterface, DeviceMethod.display, false, manage),
            // An agent session sends the glasses' microphone to a server.
            (managerInterface, Method.startAgent, false, manage),
            (agentInterface, Agent.stop, false, manage),
            (managerInterface, Method.notify, false, notify),
            (managerInterface, Method.closeNotification, false, notify),
            (managerInterface, Method.dismissNotification, false, notify),
            (managerInterface, Method.glance, false, notify),
            (managerInterface, Method.setNextEvent, false, notify),
        ]
    }
}

/// The `org.glassd.Error.*` names.
public enum GlassdErrorName {
    public static let notConfigured = "org.glassd.Error.NotConfigured"
    public static let unauthorized = "org.glassd.Error.Unauthorized"
    public static let rateLimited = "org.glassd.Error.RateLimited"
    public static let upstreamFailed = "org.glassd.Error.UpstreamFailed"
    public static let timeout = "org.glassd.Error.Timeout"
    public static let invalidArgs = "org.freedesktop.DBus.Error.InvalidArgs"
    public static let noAdapter = "org.glassd.Error.NoAdapter"
    public static let notFound = "org.glassd.Error.NotFound"
    public static let alreadyPaired = "org.glassd.Error.AlreadyPaired"
    public static let busy = "org.glassd.Error.Busy"
    /// The glasses cannot do this (their kind); D-Bus's own name.
    public static let notSupported = "org.freedesktop.DBus.Error.NotSupported"
    public static let notPaired = "org.glassd.Error.NotPaired"
    public static let notConnected = "org.glassd.Error.NotConnected"
    public static let cancelled = "org.glassd.Error.Cancelled"
    /// An update image is unreadable, malformed, or not the one pinned.
    public static let invalidImage = "org.glassd.Error.InvalidImage"
    /// The glasses' battery is too low for an update (force overrides).
    public static let batteryLow = "org.glassd.Error.BatteryLow"
    /// The job cannot be stopped in its current phase.
    public static let notCancellable = "org.glassd.Error.NotCancellable"
    /// A question from the glasses with no speech in it (or none the transcription made words of).
    public static let noSpeech = "org.glassd.Error.NoSpeech"
    /// The glasses refuse to pair: they keep a bond this computer lost (reset it on the glasses).
    public static let bondLost = "org.glassd.Error.BondLost"
    /// A photo from the glasses that is not a whole JPEG.
    public static let badPhoto = "org.glassd.Error.BadPhoto"
    /// The agent server refused or failed (its code and message are in the error text).
    public static let agentFailed = "org.glassd.Error.AgentFailed"
    /// A caller polkit (or root-only rules) does not allow; D-Bus's own name.
    public static let accessDenied = "org.freedesktop.DBus.Error.AccessDenied"
    /// Allowed only after authentication, which the caller's message did not allow; D-Bus's own name.
    public static let interactiveAuthorizationRequired = "org.freedesktop.DBus.Error.InteractiveAuthorizationRequired"
    /// Anything else that failed in glassd itself; D-Bus's own name.
    public static let failed = "org.freedesktop.DBus.Error.Failed"
}

/// A query's id: the caller's unique bus name and the serial of its Query call, so a client can
/// tell its own AnswerDelta signals from others' before the reply arrives.
public func glassdQueryID(sender: String, cookie: UInt64) -> String {
    "\(sender)/\(cookie)"
}

/// The id of a question asked on the glasses (a tap or a hold): never the shape of a D-Bus one.
public func glassdGlassesQueryID(_ unique: String) -> String {
    "glasses/\(unique)"
}

/// The id of a turn of agent session `session` (the wearer's words and the agent's answer).
public func glassdAgentQueryID(session: UInt32, turn: Int) -> String {
    "agent/\(session)/\(turn)"
}

/// The version this build reports.
public let glassdVersion = "0.1.0"
