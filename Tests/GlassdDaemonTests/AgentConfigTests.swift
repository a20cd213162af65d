// SPDX-License-Identifier: GPL-2.0-or-later
import Agent
import Foundation
@testable import GlassdConfig
@testable import GlassdDaemon
import Testing

@Suite("Configuration: [agent]", .timeLimit(.minutes(5)))
struct AgentConfigTests {
    @Test("a full section: the server, graph, websocket, ping, timeout, speech and properties passed through as JSON")
    func full() throws {
        let config = try Config.parse(
            """
            [agent]
            kind = "ten"
            base_url = "http://10.0.0.5:8080"
            graph = "voice_assistant_realtime"
            websocket_url = "ws://10.0.0.5:9000"
            allow_cleartext = "10.0.0.5"
            ping_seconds = 5
            timeout_seconds = 120
            speak = true

            [agent.properties.llm]
            model = "gpt-4o-mini"
            max_tokens = 512
            temperature = 0.5
            tools = ["weather", "time"]

            [agent.properties.websocket_server]
            port = 9000
            """)
        let agent = try #require(config.agent)
        #expect(agent.baseURL == "http://10.0.0.5:8080")
        #expect(agent.graph == "voice_assistant_realtime")
        #expect(agent.websocketURL == "ws://10.0.0.5:9000")
        #expect(agent.ping == .seconds(5))
        #expect(agent.timeoutSeconds == 120)
        #expect(agent.speak)
        #expect(
            agent.properties
                == .object([
                    "llm": .object([
                        "model": .string("gpt-4o-mini"), "max_tokens": .integer(512), "temperature": .number(0.5),
                        "tools": .array([.string("weather"), .string("time")]),
                    ]),
                    "websocket_server": .object(["port": .integer(9000)]),
                ]))
        #expect(config.privacyName == "cloud")
    }

    @Test("defaults: graph voice_assistant, port 8765 on the server's host, pings every 3 s, 60 s, silent; none without the section")
    func defaults() throws {
        let agent = try #require(try Config.parse("[agent]\nbase_url = \"http://127.0.0.1:8080\"\n").agent)
        #expect(agent == AgentSettings(baseURL: "http://127.0.0.1:8080"))
        #expect(agent.graph == "voice_assistant")
        #expect(agent.websocketURL == "ws://127.0.0.1:8765")
        #expect(agent.ping == .seconds(3) && agent.timeoutSeconds == 60 && !agent.speak && agent.properties == nil)
        #expect(AgentSettings.defaultWebSocketURL(baseURL: "http://[::1]:8080") == "ws://[::1]:8765")
        #expect(AgentSettings.defaultWebSocketURL(baseURL: "https://ten.example.org") == "wss://ten.example.org:8765")
        #expect(try Config.parse("").agent == nil)
    }

    @Test("refused with the setting named: another kind, no base_url, a bad websocket URL, pings too rare, an unknown key")
    func refusals() {
        for (text, said) in [
            ("kind = \"agora\"\nbase_url = \"http://h\"", "kind"),
            ("graph = \"g\"", "base_url"),
            ("base_url = \"ftp://h\"", "base_url"),
            ("base_url = \"http://h\"\nwebsocket_url = \"http://h:8765\"", "websocket_url"),
            ("base_url = \"http://h\"\nping_seconds = 60", "ping_seconds"),
            ("base_url = \"http://h\"\ntimeout_seconds = 0", "timeout_seconds"),
            ("base_url = \"http://h\"\nspeak = \"yes\"", "speak"),
            ("base_url = \"http://h\"\nproperties = 3", "properties"),
            ("base_url = \"http://h\"\npinq_seconds = 3", "pinq_seconds"),
        ] {
            #expect {
                _ = try Config.parse("[agent]\n" + text + "\n")
            } throws: { error in
                "\(error)".contains("[agent]") && "\(error)".contains(said)
            }
        }
    }

    @Test("[privacy] local_only refuses an agent server elsewhere, and its websocket elsewhere")
    func privacy() {
        #expect(throws: Config.Error.self) {
            try Config.parse("[privacy]\nlocal_only = true\n[agent]\nbase_url = \"http://gpu.lan:8080\"\n")
        }
        #expect(throws: Config.Error.self) {
            try Config.parse(
                "[privacy]\nlocal_only = true\n[agent]\nbase_url = \"http://127.0.0.1:8080\"\nwebsocket_url = \"ws://gpu.lan:8765\"\n")
        }
        #expect((try? Config.parse("[privacy]\nlocal_only = true\n[agent]\nbase_url = \"http://127.0.0.1:8080\"\n")) != nil)
    }

    @Test("the agent's websocket goes in the clear only to this machine or to a host allowed by name; never beside an https API")
    func cleartext() throws {
        func agent(_ lines: String) throws -> AgentSettings? { try Config.parse("[agent]\n" + lines + "\n").agent }
        func refusal(_ lines: String) -> String? {
            do {
                _ = try agent(lines)
                return nil
            } catch {
                return "\(error)"
            }
        }
        // Loopback is always fine, written any way.
        for host in ["127.0.0.1", "127.8.9.10", "localhost", "[::1]"] {
            #expect(try agent("base_url = \"http://\(host):8080\"")?.websocketURL == "ws://\(host):8765")
            #expect(try agent("base_url = \"https://ten.example.org\"\nwebsocket_url = \"ws://\(host):8765\"") != nil)
        }
        // Another machine in the clear: refused, set or derived from an http base_url, naming the way out.
        let derived = refusal("base_url = \"http://10.0.0.5:8080\"")
        #expect(derived?.contains("[agent]") == true && derived?.contains("ws://10.0.0.5:8765 (from base_url)") == true)
        #expect(derived?.contains("allow_cleartext = \"10.0.0.5\"") == true)
        let set = refusal("base_url = \"http://127.0.0.1:8080\"\nwebsocket_url = \"ws://TenBox.lan:9000/ws\"")
        #expect(set?.contains("websocket_url ws://TenBox.lan:9000/ws") == true && set?.contains("wss://") == true)
        // Allowed by name (any case; a list too), or in TLS.
        #expect(try agent("base_url = \"http://10.0.0.5:8080\"\nallow_cleartext = \"10.0.0.5\"")?.websocketURL == "ws://10.0.0.5:8765")
        #expect(try agent("base_url = \"http://127.0.0.1:8080\"\nwebsocket_url = \"ws://TenBox.lan:9000/ws\"\nallow_cleartext = [\"other\", \"tenbox.LAN\"]") != nil)
        #expect(try agent("base_url = \"http://10.0.0.5:8080\"\nwebsocket_url = \"wss://10.0.0.5:8765\"") != nil)
        // An https API: its websocket is wss by default, and a ws:// elsewhere is refused even when named.
        #expect(try agent("base_url = \"https://ten.example.org\"")?.websocketURL == "wss://ten.example.org:8765")
        let https = refusal("base_url = \"https://ten.example.org\"\nwebsocket_url = \"ws://ten.example.org:8765\"\nallow_cleartext = \"ten.example.org\"")
        #expect(https?.contains("base_url is https") == true)
        // allow_cleartext names hosts.
        #expect(refusal("base_url = \"http://127.0.0.1:8080\"\nallow_cleartext = \"ws://h\"")?.contains("allow_cleartext") == true)
        #expect(refusal("base_url = \"http://127.0.0.1:8080\"\nallow_cleartext = 3")?.contains("allow_cleartext") == true)
    }
}
