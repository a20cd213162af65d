// SPDX-License-Identifier: GPL-2.0-or-later
@testable import GlassdConfig
@testable import GlassdDaemon
import Product
import Testing

@Suite("What the configured servers can do", .timeLimit(.minutes(5)))
struct BackendAbilitiesTests {
    private static let embedded = "[assistant]\nbase_url = \"http://127.0.0.1:8000/v1\"\nembedded = true\n"

    @Test(
        "the embedded backend neither hears (unless a speech server is set) nor sees; its own speech server translates only with Whisper base (translates = true); any other server does all",
        arguments: [
            ("[assistant]\nbase_url = \"http://127.0.0.1:8000/v1\"\n", true, true, true),
            (embedded, false, false, false),
            (embedded + "[transcription]\nbase_url = \"http://127.0.0.1:8080/v1\"\n", true, false, true),
            (embedded + "[transcription]\nbase_url = \"http://127.0.0.1:8080/v1\"\nembedded = true\n", true, false, false),
            // With Whisper base beside tiny.en (Scripts/run says so), the embedded server translates.
            (embedded + "[transcription]\nbase_url = \"http://127.0.0.1:8080/v1\"\nembedded = true\ntranslates = true\n", true, false, true),
        ])
    func abilities(config text: String, hears: Bool, sees: Bool, translates: Bool) throws {
        let abilities = BackendAbilities(try Config.parse(text))
        #expect(abilities.hears == hears)
        #expect(abilities.sees == sees)
        #expect(abilities.translates == translates)
    }
}
