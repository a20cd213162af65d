// SPDX-License-Identifier: GPL-2.0-or-later
import Agent
import WebSocket

/// The agent graph's websocket as the session uses it: text messages only (the websocket_server
/// extension sends JSON text; anything binary is not its protocol and is skipped).
struct WebSocketAgentSocket: AgentSocket {
    let connection: WebSocketConnection

    static func open(_ url: String) async throws -> any AgentSocket {
        WebSocketAgentSocket(connection: try await WebSocketConnection.connect(to: url, timeout: .seconds(5)))
    }

    func send(text: String) async throws {
        try await connection.send(text: text)
    }

    var messages: any AsyncSequence<String, any Error> {
        connection.messages.compactMap { message in
            if case .text(let text) = message { text } else { nil }
        }
    }

    func close() async {
        await connection.close()
    }
}
