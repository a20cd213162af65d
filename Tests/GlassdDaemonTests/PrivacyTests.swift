// SPDX-License-Identifier: GPL-2.0-or-later
import Foundation
@testable import GlassdConfig
@testable import GlassdDaemon
import Testing

@Suite("Local-only privacy", .timeLimit(.minutes(5)))
struct PrivacyTests {
    @Test("loopback addresses and localhost are on this machine; other names are not, unless allowed", arguments: [
        ("http://localhost:11434/v1", true), ("http://LOCALHOST/v1", true), ("http://models.localhost:8080/v1", true),
        ("http://127.0.0.1:8080/v1", true), ("http://127.9.8.7/v1", true), ("http://[::1]:8080/v1", true),
        ("http://[::ffff:127.0.0.1]/v1", true), ("https://api.openai.com/v1", false), ("http://128.0.0.1/v1", false),
        ("http://localhost.example.com/v1", false), ("http://10.0.0.5:8080/v1", false), ("http://box.lan:8080/v1", true),
        ("http://BOX.LAN/v1", true), ("not a url", false),
    ])
    func hosts(url: String, allowed: Bool) {
        let policy = PrivacyPolicy(localOnly: true, allowedHosts: ["box.lan"])
        #expect(policy.allows(url) == allowed)
    }

    @Test("local_only refuses a remote backend, naming the URL and the setting; loopback and cloud mode start")
    func config() throws {
        let remote = """
            [assistant]
            base_url = "http://127.0.0.1:8080/v1"
            [transcription]
            base_url = "https://speech.invalid/v1"
            [privacy]
            local_only = true
            """
        do {
            _ = try Config.parse(remote, file: "glassd.conf")
            Issue.record("a remote speech server was accepted")
        } catch {
            #expect(error.description.contains("https://speech.invalid/v1"), "\(error)")
            #expect(error.description.contains("[transcription] base_url"), "\(error)")
            #expect(error.description.contains("[privacy] local_only"), "\(error)")
        }
        let allowed = try Config.parse(remote + "\nallowed_hosts = [\"speech.invalid\"]\n")
        #expect(allowed.privacyName == "local-only")
        #expect(try Config.parse(remote.replacingOccurrences(of: "local_only = true", with: "")).privacyName == "cloud")
        // Not enforced, but every server on this machine (the embedded backends): local.
        let embedded = """
            [assistant]
            base_url = "http://127.0.0.1:8089/v1"
            [transcription]
            base_url = "http://localhost:8090/v1"
            """
        #expect(try Config.parse(embedded).privacyName == "local")
        #expect(try Config.parse(embedded + "\n[privacy]\nlocal_only = true\n").privacyName == "local-only")
        #expect(try Config.parse("").privacyName == "local")
        #expect(try Config.parse("[assistant]\nbase_url = \"http://box.lan:8080/v1\"\n").privacyName == "cloud")
        #expect(throws: Config.Error.self) { try Config.parse("[privacy]\nallowed_hosts = \"box.lan\"\n") }
    }
}
