// SPDX-License-Identifier: GPL-2.0-or-later
import Foundation

/// `[privacy] local_only`: every backend glassd talks to must be on this machine (a loopback
/// address, or `localhost`) or a host the user listed in `allowed_hosts`. Checked on the URLs as
/// written, before anything is looked up or connected: a name other than localhost is never
/// resolved to find out where it points.
struct PrivacyPolicy: Sendable, Equatable {
    var localOnly = false
    /// Hosts allowed besides loopback, compared without case (e.g. a LAN box running the models).
    var allowedHosts: [String] = []

    /// Manager1.Privacy for a configuration with these server URLs: `local-only` when enforced,
    /// `local` when every one is on this machine anyway (loopback; the embedded backends, or
    /// none configured), else `cloud`.
    func name(for urls: [String]) -> String {
        if localOnly { return "local-only" }
        return urls.allSatisfy { PrivacyPolicy().allows($0) } ? "local" : "cloud"
    }

    /// The first of `urls` (setting name, URL) that leaves the machine, as a refusal naming both.
    func check(_ urls: [(setting: String, url: String)], file: String) throws(Config.Error) {
        guard localOnly else { return }
        for (setting, url) in urls where !allows(url) {
            throw Config.Error(
                description: "\(file): [privacy] local_only is set, but \(setting) is \(url), which is not on this machine; "
                    + "point it at a loopback address or add its host to [privacy] allowed_hosts")
        }
    }

    func allows(_ url: String) -> Bool {
        guard let host = URL(string: url)?.host?.lowercased() else { return false }
        let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        return Self.isLoopback(bare) || allowedHosts.contains { $0.lowercased() == bare }
    }

    /// localhost and its subdomains (RFC 6761 reserves them for loopback), 127.0.0.0/8, ::1 and
    /// its IPv4-mapped form.
    static func isLoopback(_ host: String) -> Bool {
        if host == "localhost" || host.hasSuffix(".localhost") { return true }
        if host == "::1" || host == "0:0:0:0:0:0:0:1" { return true }
        let v4 = host.hasPrefix("::ffff:") ? String(host.dropFirst(7)) : host
        var address = in_addr()
        guard inet_pton(AF_INET, v4, &address) == 1 else { return false }
        return UInt32(bigEndian: address.s_addr) >> 24 == 127
    }
}
