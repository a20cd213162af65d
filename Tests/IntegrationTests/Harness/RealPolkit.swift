// SPDX-License-Identifier: GPL-2.0-or-later
import Foundation

/// Debian's polkitd as a machine runs it, on a SystemBus. It reads its actions from
/// /usr/share/polkit-1/actions and its rules from /etc/polkit-1/rules.d and nowhere else, so a
/// run installs glassd's action file and the tests' rule there and takes both away after
/// (putting back an action file that was there before). polkitd starts as root and drops to
/// user polkitd before it connects, which is why the bus loads Debian's policy for it.
enum RealPolkit {
    static let daemon = "/usr/lib/polkit-1/polkitd"
    static let actionFile = "/usr/share/polkit-1/actions/org.glassd.policy"
    static let rulesFile = "/etc/polkit-1/rules.d/10-glassd-tests.rules"

    /// The tests' rule, as an administrator would write one: the ally may do all glassd asks
    /// about; everyone else meets the actions' defaults (auth_admin: no session here).
    static let rules = """
        // Installed by glassd's tests for one run, then removed.
        polkit.addRule(function (action, subject) {
            if (action.id.indexOf("org.glassd.") == 0 && subject.user == "\(SystemBus.allyUser)") {
                return polkit.Result.YES;
            }
        });

        """

    /// Root, setpriv, polkitd and its bus policy, and the accounts Scripts/test creates.
    static var available: Bool {
        SystemBus.available && FileManager.default.isExecutableFile(atPath: daemon)
            && FileManager.default.fileExists(atPath: SystemBus.polkitBusPolicy)
            && [SystemBus.daemonUser, SystemBus.allyUser, SystemBus.otherUser, "polkitd"].allSatisfy { (name: String) in getpwnam(name) != nil }
    }
}

extension SystemBus {
    /// polkitd, reading `actions` (glassd's action file) and the tests' rule, until `body` ends.
    func withRealPolkit<R: Sendable>(actions: String = Paths.root + "/dbus/org.glassd.policy", _ body: () async throws -> R)
        async throws -> R
    {
        let previous = FileManager.default.contents(atPath: RealPolkit.actionFile)
        defer {
            if let previous {
                FileManager.default.createFile(atPath: RealPolkit.actionFile, contents: previous)
            } else {
                try? FileManager.default.removeItem(atPath: RealPolkit.actionFile)
            }
            try? FileManager.default.removeItem(atPath: RealPolkit.rulesFile)
        }
        let policy = try Data(contentsOf: URL(fileURLWithPath: actions))
        guard FileManager.default.createFile(atPath: RealPolkit.actionFile, contents: policy, attributes: [.posixPermissions: 0o644]),
            FileManager.default.createFile(
                atPath: RealPolkit.rulesFile, contents: Data(RealPolkit.rules.utf8), attributes: [.posixPermissions: 0o644])
        else { throw TestFailure("cannot install polkit's files for the run") }
        return try await withPolkitDaemon(RealPolkit.daemon, [], body)
    }
}
