// SPDX-License-Identifier: GPL-2.0-or-later
@testable import GlassdConfig
@testable import GlassdDaemon
import Testing
import Wake

@Suite("Configuration: [wake]", .timeLimit(.minutes(5)))
struct WakeConfigTests {
    @Test("off by default, and without a phrase")
    func off() throws {
        #expect(try Config.parse("").wake == nil)
        #expect(try Config.parse("[wake]\nsource = \"host\"\n").wake == nil)
    }

    @Test("a phrase alone listens on the glasses at normal sensitivity, with Debian's model; every setting is read")
    func settings() throws {
        #expect(try Config.parse("[wake]\nphrase = \"hey glasses\"\n").wake == WakeSettings(phrase: "hey glasses"))
        let full = try Config.parse(
            """
            [wake]
            phrase = "OK, Monocle"
            source = "host"
            sensitivity = "high"
            model = "/opt/model"
            """)
        #expect(full.wake == WakeSettings(phrase: "OK, Monocle", source: .host, sensitivity: .high, model: "/opt/model"))
    }

    @Test("wrong settings stop glassd with the file, the section and what is wrong")
    func wrong() {
        let cases: [(String, String)] = [
            ("[wake]\nphrase = \"hey glasses\"\nsource = \"phone\"\n", "glassd.conf: [wake] source must be \"glasses\" or \"host\", not \"phone\""),
            ("[wake]\nphrase = \"hey glasses\"\nsensitivity = \"max\"\n", "glassd.conf: [wake] sensitivity must be \"low\", \"normal\" or \"high\", not \"max\""),
            ("[wake]\nphrase = \"!!\"\n", "glassd.conf: [wake] phrase: The wake phrase cannot be used: it has no words"),
            ("[wake]\nphrase = \"hey glasses\"\nvolume = 3\n", "glassd.conf: [wake] has no setting volume"),
            ("[wake]\nphrase = 3\n", "glassd.conf: [wake] phrase must be a string"),
        ]
        for (text, message) in cases {
            #expect(throws: Config.Error(description: message)) { try Config.parse(text) }
        }
    }
}
