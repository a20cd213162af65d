// SPDX-License-Identifier: GPL-2.0-or-later
import Foundation
import Testing

/// Scripts/backend's choice of chat model (--chat-model, GLASSD_CHAT_MODEL): a name it does not
/// serve is refused before anything is set up or started, naming the ones it does.
@Suite("The embedded backend's chat model option", .timeLimit(.minutes(1)))
struct ChatModelOptionTests {
    @Test("an unknown --chat-model or GLASSD_CHAT_MODEL is a usage error that names the models served; no venv is made")
    func unknownModel() async throws {
        let venv = try Paths.temporaryDirectory() + "/venv"
        let script = Paths.root + "/Scripts/backend"
        let byOption = try await runCommand(
            "python3", [script, "--setup-only", "--venv", venv, "--chat-model", "GPT-9"], environment: ["GLASSD_CHAT_MODEL": ""])
        let byEnvironment = try await runCommand(
            "python3", [script, "--setup-only", "--venv", venv], environment: ["GLASSD_CHAT_MODEL": "GPT-9"])
        for result in [byOption, byEnvironment] {
            #expect(result.status == 2, "\(result.stderr)")
            #expect(result.stderr.contains("no chat model 'GPT-9'"), "\(result.stderr)")
            #expect(result.stderr.contains("Qwen2.5-Coder-1.5B-Instruct") && result.stderr.contains("SmolLM2-135M-Instruct"))
        }
        #expect(!FileManager.default.fileExists(atPath: venv), "nothing was set up")
    }
}
