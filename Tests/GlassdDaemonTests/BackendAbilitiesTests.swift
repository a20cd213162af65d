// SPDX-License-Identifier: GPL-2.0-or-later
@testable import GlassdDaemon
import Testing

@Suite("What the configured servers can do")
struct BackendAbilitiesTests {
    @Test(
        "the embedded backend neither hears (unless a speech server is set) nor sees; any other server does both",
        arguments: [
            ("[assistant]\nbase_url = \"http://127.0.0.1:8000/v1\"\n", true, true),
            ("[assistant]\nbase_url = \"http://127.0.0.1:8000/v1\"\nembedded = true\n", false, false),
            (
                "[assistant]\nbase_url = \"http://127.0.0.1:8000/v1\"\nembedded = true\n"
                    + "[transcription]\nbase_url = \"http://127.0.0.1:8080/v1\"\n", true, false
            ),
        ])
    func abilities(config text: String, hears: Bool, sees: Bool) throws {
        let abilities = BackendAbilities(try Config.parse(text))
        #expect(abilities.hears == hears)
        #expect(abilities.sees == sees)
    }
}
