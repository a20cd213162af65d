// SPDX-License-Identifier: GPL-2.0-or-later
import AssistantEngine
import Foundation
import Testing

/// Scripts/backend's choice of chat model (--chat-model, GLASSD_CHAT_MODEL): a name it does not
/// serve is refused before anything is set up or started, naming the ones it does; and the system
/// prompt it warms its chat server up with is glassd's.
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

    @Test("the prompt Scripts/backend warms the chat server up with is glassd's assistant system prompt, word for word")
    func warmUpPromptIsGlassds() async throws {
        // A copy that drifted would warm up a prefix glassd never sends: its first answer would
        // pay for the whole system prompt again.
        let result = try await runCommand(
            "python3",
            ["-c",
             "import importlib.machinery, importlib.util, sys; loader = importlib.machinery.SourceFileLoader('b', sys.argv[1]); "
                + "module = importlib.util.module_from_spec(importlib.util.spec_from_loader('b', loader)); loader.exec_module(module); "
                + "sys.stdout.write(module.GLASSD_SYSTEM_PROMPT)",
             Paths.root + "/Scripts/backend"])
        #expect(result.ok, "\(result.stderr)")
        #expect(result.stdout == Mode.assistant.systemPrompt)
    }
}
